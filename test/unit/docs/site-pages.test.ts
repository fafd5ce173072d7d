/**
 * The pages the site build makes from files outside docs/ (scripts/docs/site-pages.ts): an
 * example's README keeps its links working on the site, and no line of it is taken for HTML.
 */
import { rewriteLinks } from '../../../scripts/docs/site-pages';
import { joinTagLines } from '../../../scripts/docs/markdown';

test('site pages: links of an example README go to site pages, or become the path of the file they name', () => {
  const readme = [
    'See [the batch example](../batch-jsonl/README.md), [all examples](../README.md) and [the guide](../../docs/guides/many-agents.md#batches-and-schedules).',
    'The client is [client.ts](client.ts); the [worker](./worker.ts) runs it. [Temporal](https://temporal.io) stays.',
    '```sh',
    'cat [not a link](x.md)',
    '```',
  ].join('\n');
  expect(rewriteLinks(readme, 'typed-client').split('\n')).toEqual([
    'See [the batch example](./batch-jsonl.md), [all examples](./index.md) and [the guide](../guides/many-agents.md#batches-and-schedules).',
    'The client is `examples/typed-client/client.ts`; the worker (`examples/typed-client/worker.ts`) runs it. [Temporal](https://temporal.io) stays.',
    '```sh',
    'cat [not a link](x.md)',
    '```',
  ]);
});

test('site pages: a line of prose that starts with <word> is joined to the line before, code blocks are not', () => {
  expect(joinTagLines('Run `loopwright status\n<id>` now.\n\n```text\n<id>\n```\n<small>x</small>')).toBe('Run `loopwright status <id>` now.\n\n```text\n<id>\n```\n<small>x</small>');
});
