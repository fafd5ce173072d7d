/**
 * Limits of the bundle runtime, in one place. Bundle files are parsed on the worker's event loop,
 * which every session on the worker shares, so every parser, expansion and recursion over bundle
 * text is bounded here; a file over a limit fails with `LimitExceededError` naming the file and
 * the limit (its `limit` field is the constant's name).
 *
 * Each limit sits well above what real BMAD files need (measured on the v6 alpha corpus: YAML
 * files up to 9 KB and 2,000 syntax tokens, agent files up to 12 KB, element text up to 1.5 KB,
 * XML depth 5, 14 critical actions, variable chains 3 links deep, no YAML anchors at all) and far
 * below what hurts: under these limits the slowest input found (a YAML file of 32 KiB of `[`) is
 * rejected in about 0.1 s, where the worst cases before them took minutes or crashed the worker.
 */

/**
 * Largest `config.yaml`, `workflow.yaml` or `bundle.yaml` the runtime parses: 32 KiB, well below
 * the 1 MiB read limit (the largest real one is 6 KB). The `yaml` package builds its syntax tree
 * at up to about 3 µs per byte (a file of `[`), so this bounds that step to about 0.1 s.
 */
export const MAX_YAML_BYTES = 32 * 1024;

/**
 * Most tokens in the syntax tree of one YAML file (a `key: value` line has about six). Composing
 * costs up to about 10 µs per token when each token is an error (a file of `,`), so this bounds
 * that step to about 0.2 s. The densest real file has 0.4 tokens per byte, so ordinary files under
 * `MAX_YAML_BYTES` stay under it.
 */
export const MAX_YAML_TOKENS = 20_000;

/** Most entries (mapping keys plus sequence items, at any depth) in one YAML file. */
export const MAX_YAML_ENTRIES = 10_000;

/** Deepest nesting of mappings and sequences in one YAML file. */
export const MAX_YAML_DEPTH = 64;

/**
 * Most aliases (`*name`) and most anchors (`&name`) in one YAML file. Resolving one alias walks the
 * whole document in the `yaml` package, so many aliases cost quadratic time.
 */
export const MAX_YAML_ALIASES = 100;

/** See `MAX_YAML_ALIASES`. */
export const MAX_YAML_ANCHORS = 100;

/**
 * The `yaml` package's `maxAliasCount`: how many nodes aliases may expand to (its guard against
 * "billion laughs" documents). The value after aliases is also bounded by `MAX_YAML_ENTRIES`.
 */
export const YAML_MAX_ALIAS_COUNT = 100;

/** Largest agent file the parser reads, in characters. */
export const MAX_AGENT_CHARS = 256 * 1024;

/** Longest single text of an agent (a persona part, a critical action, a prompt, a rule, ...), in characters. */
export const MAX_AGENT_TEXT_CHARS = 32 * 1024;

/** Deepest element nesting in an agent's XML. */
export const MAX_XML_DEPTH = 64;

/** Most elements in an agent's XML. */
export const MAX_XML_ELEMENTS = 10_000;

/** Most critical actions (activation steps plus `<critical-actions>` items) of one agent. */
export const MAX_CRITICAL_ACTIONS = 100;

/** Most links in a chain of variables whose values name other variables (`a: '{b}'`, `b: '{c}'`, ...). */
export const MAX_VARIABLE_DEPTH = 32;

/**
 * Most characters that variable substitution may insert during one resolution (one text, one
 * config, one workflow.yaml), so a doubling chain (`b: '{a}{a}'`, `c: '{b}{b}'`, ...) stops early.
 */
export const MAX_VARIABLE_EXPANSION_CHARS = 1024 * 1024;

/** Most names an error message lists (the available variables of a config with thousands of keys). */
export const MAX_LISTED_NAMES = 100;
