/**
 * Reading recorded sessions from their histories, on the committed fixtures (real histories of the
 * dev server): messages in order, calls with their results however they ran (activity, local
 * activity, inline read, MCP), approvals, turn results, sessions that continued as new, and the
 * export file's wrapper.
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { JSONToPayload, payloadToJSON } from '@temporalio/common/lib/proto-utils';
import { decodeJsonPayload, decodePayloadsInPlace, historyRunsOf, payloadsIn, readHistoryFile, SESSION_HISTORY_FORMAT } from '../../../activities/eval/history-json';
import { EncryptionCodec } from '../../../codec/encryption-codec';
import { redactInPlace } from '../../../client/session-export';
import { extractRecording, RecordingError } from '../../../common/eval/extract-recording';
import { argumentsKey, asRecorded, canonicalJson } from '../../../common/eval/canonical-json';
import { evalTurnOf } from '../../../activities/eval/eval-activities';

const FIXTURES = path.resolve(__dirname, '../../fixtures/histories');

function recordingOf(...files: string[]) {
  const runs = files.flatMap((f) => readHistoryFile(path.join(FIXTURES, `${f}.json`)).runs);
  return extractRecording(runs, decodeJsonPayload);
}

test('canonical JSON: keys sorted at every depth, arrays in order; arguments that are not JSON compare as trimmed text', () => {
  expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
  expect(argumentsKey(' {"b": 1, "a": 2} ')).toBe(argumentsKey('{"a":2,"b":1}'));
  expect(argumentsKey('')).toBe('{}');
  expect(argumentsKey(' {not json ')).toBe('{not json');
  expect(asRecorded('{"path":"/tmp/scratch/p/docs/x.md"}', { '/tmp/scratch/p': '/home/me/p', '/tmp/scratch': '/nowhere' })).toBe('{"path":"/home/me/p/docs/x.md"}');
});

test('extract: a turn with commands approved, denied and failed (v10): calls with their activity results, the decisions with their reason', () => {
  const r = recordingOf('session-v10-commands');
  expect(r.input).toMatchObject({ agentId: 'facilitator', commands: { enabled: true } });
  expect(r.ended).toBe('completed');
  expect(r.turns).toHaveLength(1);
  const [turn] = r.turns;
  expect(turn).toMatchObject({ turn: 1, message: 'run the commands', result: { status: 'completed', iterations: 4, usage: { totalTokens: 9574 } } });
  expect(turn!.calls.map((c) => [c.tool, c.iteration, c.ran, c.result?.success])).toEqual([
    ['run_command', 1, 'activity', true],
    ['run_command', 2, undefined, undefined],
    ['run_command', 3, 'activity', false],
  ]);
  expect(turn!.approvals.map((a) => [a.callId, a.approved, a.reason])).toEqual([
    ['call_run', true, undefined],
    ['call_denied', false, 'not this one'],
    ['call_fails', true, undefined],
  ]);
  expect(turn!.latencyMs).toBeGreaterThan(0);
});

test('extract: custom tools as local activities, MCP tools by their own names and arguments (v5), and an interrupted turn', () => {
  const r = recordingOf('session-v5-tools');
  expect(r.turns.map((t) => [t.message, t.result?.status])).toEqual([
    ['use the tools', 'completed'],
    ['take long', 'interrupted'],
    ['go on', 'completed'],
  ]);
  expect(r.turns[0]!.calls.map((c) => [c.tool, c.key, c.ran])).toEqual([
    ['get_weather', '{"city":"Lisbon"}', 'local'],
    ['fs__read_text_file', expect.stringContaining('notes.txt'), 'activity'],
    ['everything__echo', '{"message":"ping"}', 'activity'],
    ['fs__write_file', expect.stringContaining('out.md'), 'activity'],
  ]);
  expect(r.turns[0]!.calls[0]!.result).toEqual({ success: true, content: 'Sunny in Lisbon' });
  expect(r.turns[0]!.calls[2]!.result).toEqual({ success: true, content: 'Echo: ping' });
});

test('extract: inline reads come with the model call; a session that continued as new three times reads as one (v7 chain)', () => {
  const single = recordingOf('session-v7-inline-reads');
  const chain = recordingOf('session-v7-inline-reads-chain-run1', 'session-v7-inline-reads-chain-run2', 'session-v7-inline-reads-chain-run3');
  for (const r of [single, chain]) {
    expect(r.turns.map((t) => [t.turn, t.message, t.result?.status])).toEqual([
      [1, '*intake', 'completed'],
      [2, 'take your time', 'interrupted'],
      [3, 'go on', 'completed'],
    ]);
    expect(r.turns[0]!.calls.map((c) => [c.tool, c.ran])).toEqual([
      ['execute_workflow', 'inline'],
      ['read_file', 'inline'],
      ['no_such_tool', undefined],
      ['save_output', 'activity'],
    ]);
  }
  expect(chain.warnings).toEqual([]);
  expect(chain.input.continued).toBeUndefined();
});

test('extract: a turn resumed in a later run, document checks and an on-demand check (v6 verify, runs in their order)', () => {
  const r = recordingOf('session-v6-verify-run1', 'session-v6-verify-run3', 'session-v6-verify-run4', 'session-v6-verify-run2');
  expect(r.turns.map((t) => [t.message, t.result?.status, t.result?.verification?.status])).toEqual([
    ['*spec', 'completed', 'verified'],
    ['*validate-spec', 'failed_verification', 'failed_verification'],
    ['*spec', 'failed_verification', 'failed_verification'],
  ]);
  expect(r.turns[0]!.calls.map((c) => c.tool)).toEqual(['execute_workflow', 'save_output', 'save_output']);
  // The items a failed check failed, with the verifier's note; none for a document that passed.
  expect(r.turns.map((t) => t.result?.verification?.failedItems)).toEqual([
    undefined,
    [{ item: 'Has no placeholders left', section: 'Form', note: 'a placeholder is left' }],
    [expect.objectContaining({ note: 'TBD' })],
  ]);
  expect(r.warnings).toEqual([]);
  // Read from its second run only: the earlier turns are missing, and it says so.
  const late = recordingOf('session-v6-verify-run3');
  expect(late.warnings[0]).toMatch(/starts at run 2 of its session/);
});

test('extract: an eval turn carries the recorded results its calls are answered with, the largest left out past the bound', () => {
  const r = recordingOf('session-v7-inline-reads');
  expect(evalTurnOf(r, 1)).toMatchObject({
    turn: 1,
    total: 3,
    message: '*intake',
    calls: [{ tool: 'execute_workflow', result: { success: true } }, { tool: 'read_file' }, { tool: 'no_such_tool' }, { tool: 'save_output' }],
  });
  expect(evalTurnOf(r, 4)).toBeNull();
  const big = structuredClone(r);
  big.turns[0]!.calls[1]!.result = { success: true, content: 'x'.repeat(2 * 1024 * 1024) };
  const turn = evalTurnOf(big, 1)!;
  expect(turn.omittedResults).toBe(1);
  expect(turn.calls[1]!.result).toBeUndefined();
  expect(turn.calls[0]!.result).toBeDefined();
});

test('history files: the export wrapper, a plain Temporal history, and what is neither', () => {
  const plain = readHistoryFile(path.join(FIXTURES, 'session-v1.json'));
  expect(plain.workflowId).toBeDefined();
  const wrapped = historyRunsOf({ format: SESSION_HISTORY_FORMAT, workflowId: 'w', payloads: 'decoded', exportedAt: '', runs: [{ runId: 'r1', history: { events: plain.runs[0]!.events } }] });
  expect(wrapped).toEqual({ workflowId: 'w', runs: [{ runId: 'r1', events: plain.runs[0]!.events }] });
  expect(extractRecording(wrapped.runs, decodeJsonPayload).turns).toHaveLength(3);
  expect(() => historyRunsOf({ format: 'other/9' })).toThrow(RecordingError);
  expect(() => historyRunsOf({ hello: 1 })).toThrow(/neither a Temporal JSON history/);
  expect(() => extractRecording([{ events: [] }], decodeJsonPayload)).toThrow(/no events/);
});

test('encrypted histories: read with the codec key, refused without it (saying so), and left encrypted by the export redaction', async () => {
  const codec = new EncryptionCodec([{ id: 'k1', key: randomBytes(32) }], 'k1');
  const { runs } = readHistoryFile(path.join(FIXTURES, 'session-v10-commands.json'));
  // Encrypt every payload, as a server with the codec on holds them.
  for (const place of payloadsIn(runs)) {
    const [encrypted] = await codec.encode([JSONToPayload(place.payload as never)]);
    (place.holder as Record<string | number, unknown>)[place.key] = payloadToJSON(encrypted!);
  }
  const encrypted = JSON.stringify(runs);
  expect(encrypted).not.toContain(Buffer.from('run the commands').toString('base64').slice(0, 12));
  expect(() => extractRecording(structuredClone(runs), decodeJsonPayload)).toThrow(/encrypted payloads: set LOOPWRIGHT_CODEC_KEY/);
  const redacted = structuredClone(runs);
  redactInPlace(redacted, ['run the commands']);
  expect(JSON.stringify(redacted)).toBe(encrypted);
  await decodePayloadsInPlace(runs, [codec]);
  expect(extractRecording(runs, decodeJsonPayload).turns[0]).toMatchObject({ message: 'run the commands', result: { status: 'completed' } });
  // Decoded, the redaction reaches into every payload.
  redactInPlace(runs, ['run the commands']);
  expect(extractRecording(runs, decodeJsonPayload).turns[0]!.message).toBe('[redacted]');
});
