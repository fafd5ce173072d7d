/**
 * Which agents of a bundle an agent may hand tasks to (`delegate_task`): the session's own list
 * (`SessionInput.delegation.agents`), else the agent's `delegates:` in bundle.yaml, else every other
 * agent of the bundle. Entries are ids or `*` patterns, matched against the id a session asks for
 * (`bmm/pm` in installed and source trees) and the plain id (`pm`). An agent never calls itself.
 * Agent initialisation runs this (recorded in history); `loopwright inspect` shows the result.
 */
import { matchesToolPattern } from '../common/tool-patterns';
import type { DelegateAgent } from '../common/delegation-types';
import { agentHead, listedId, loadBundle, matchAgent, type BundleAgent, type BundleInfo, type LoadBundleOptions } from './bundle-loader';

/** The agents `agentId` of the bundle at `bundlePath` may call, in the bundle's order. */
export async function agentDelegates(bundlePath: string, agentId: string, patterns: readonly string[] | undefined, options: LoadBundleOptions = {}): Promise<DelegateAgent[]> {
  const bundle = await loadBundle(bundlePath, options);
  return delegatesOf(bundle, matchAgent(bundle, agentId), patterns);
}

/** The agents `self` of `bundle` may call (see the module comment). */
export async function delegatesOf(bundle: BundleInfo, self: BundleAgent, patterns: readonly string[] | undefined): Promise<DelegateAgent[]> {
  const allow = patterns ?? self.delegates;
  const out: DelegateAgent[] = [];
  for (const agent of bundle.agents) {
    if (agent === self || agent.file === self.file) continue;
    const id = listedId(bundle, agent);
    if (allow !== undefined && !allow.some((p) => matchesToolPattern(p, id) || matchesToolPattern(p, agent.id))) continue;
    let { name, title } = agent;
    if (name === undefined || title === undefined) {
      const head = await agentHead(agent.file).catch(() => undefined);
      name ??= head?.name;
      title ??= head?.title;
    }
    out.push({ id, name: name ?? agent.id, title: title ?? '' });
  }
  return out;
}
