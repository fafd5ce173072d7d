/**
 * The verify phase's rules outside the dev server: which save is the workflow's document, which
 * menu items name a checklist, the texts sent to the agent and shown to the user, and the settings
 * the command line gives.
 */
import type { AgentDefinition } from '../../../bundle/agent-schema';
import { commandChecks } from '../../../activities/command-checks';
import { modelSessionSettings } from '../../../cli/commands/session-settings';
import { turnExitCode, turnFailureType, turnNotes, turnStatusMessage } from '../../../cli/commands/session-text';
import { fixRequest, reportText, verificationLine } from '../../../common/verify-report';
import type { VerificationReport } from '../../../common/verify-types';
import { sessionInputProblem } from '../../../common/session-input-schema';
import { matchesExpected } from '../../../workflows/verify/verify';
import { sessionDetails } from '../../../workflows/session/web-ui';
import type { SessionState } from '../../../common/session-types';

describe('matchesExpected', () => {
  test('any save counts when the workflow names no document', () => {
    expect(matchesExpected('/p/docs/x.md', undefined)).toBe(true);
    expect(matchesExpected('/p/docs/x.md', '')).toBe(true);
  });
  test('a named document matches itself, or a relative name by its tail', () => {
    expect(matchesExpected('/p/docs/PRD.md', '/p/docs/PRD.md')).toBe(true);
    expect(matchesExpected('/p/docs/status.yaml', '/p/docs/PRD.md')).toBe(false);
    expect(matchesExpected('/p/docs/PRD.md', 'docs/PRD.md')).toBe(true);
    expect(matchesExpected('/p/docs/xPRD.md', 'PRD.md')).toBe(false);
  });
  test('a {{placeholder}} stands for part of one name, never a folder', () => {
    const expected = '/p/docs/story-{{story_key}}.md';
    expect(matchesExpected('/p/docs/story-1.2.md', expected)).toBe(true);
    expect(matchesExpected('/p/docs/story-.md', expected)).toBe(false);
    expect(matchesExpected('/p/docs/story-a/b.md', expected)).toBe(false);
    expect(matchesExpected('/p/other/story-1.md', expected)).toBe(false);
    expect(matchesExpected('/p/docs/research-market-2026-11-25.md', '/p/docs/research-{{research_type}}-{{date}}.md')).toBe(true);
    expect(matchesExpected('/p/docs/research-market.md', '/p/docs/research-{{research_type}}-{{date}}.md')).toBe(false);
  });
});

describe('commandChecks', () => {
  const agent = (commands: AgentDefinition['commands']): AgentDefinition =>
    ({
      id: 'a',
      name: 'A',
      title: 'T',
      persona: { role: '', identity: '', communication_style: '', principles: '' },
      criticalActions: [],
      commands,
      prompts: [],
      menuHandlers: [],
      rules: [],
      dialect: 'source',
      file: 'a.md',
    }) as AgentDefinition;
  test('validate-workflow items are checked on demand; workflow items with a checklist name the document they will save', () => {
    const checks = commandChecks(
      agent([
        { cmd: '*help', description: '', targets: [] },
        { cmd: '*prd', description: '', target: { kind: 'workflow', value: 'w.yaml' }, targets: [{ kind: 'workflow', value: 'w.yaml' }] },
        { cmd: '*validate-prd', description: '', target: { kind: 'validate-workflow', value: 'w.yaml' }, targets: [{ kind: 'validate-workflow', value: 'w.yaml' }] },
        {
          cmd: '*brief',
          description: '',
          target: { kind: 'workflow', value: 'b.yaml' },
          targets: [{ kind: 'workflow', value: 'b.yaml' }],
          checklist: 'c.md',
          document: '{output_folder}/b.md',
        } as AgentDefinition['commands'][number],
      ]),
    );
    expect(checks).toEqual([
      { cmd: '*validate-prd', kind: 'validate', workflow: 'w.yaml' },
      { cmd: '*brief', kind: 'workflow', workflow: 'b.yaml', checklist: 'c.md', document: '{output_folder}/b.md' },
    ]);
  });
});

describe('report texts', () => {
  const report: VerificationReport = {
    status: 'failed_verification',
    name: 'prd',
    checklist: '/b/checklist.md',
    document: '/p/docs/PRD.md',
    attempts: 1,
    maxAttempts: 3,
    passed: 1,
    failed: 1,
    items: [
      { item: 'Goal stated', section: 'Content', passed: true, note: 'yes' },
      { item: 'Users named', passed: false, note: 'none named' },
    ],
    source: 'workflow',
  };
  test('the fix request names every failed item, the attempt and what to do', () => {
    const text = fixRequest(report);
    expect(text).toContain('/p/docs/PRD.md was checked against the checklist /b/checklist.md: 1 of 2 items failed (attempt 1 of 3)');
    expect(text).toContain('- ✗ Users named — none named');
    expect(text).not.toContain('Goal stated');
    expect(text).toContain('save it again with save_output');
    expect(text).toContain('2 verification attempts left');
  });
  test('one line per outcome, and the full report', () => {
    expect(verificationLine(report)).toBe('prd: failed verification (1 of 2 items failed after 1 attempt)');
    expect(verificationLine({ ...report, status: 'verified', attempts: 2, passed: 2, failed: 0 })).toBe('prd: verified (2/2 items, attempt 2 of 3)');
    expect(verificationLine({ ...report, status: 'not_verified', reason: 'no document' })).toBe('prd: not verified: no document');
    expect(reportText(report).split('\n')).toEqual([
      'Verification prd: failed verification (1 of 2 items failed after 1 attempt)',
      'document: /p/docs/PRD.md',
      'checklist: /b/checklist.md',
      '  ✓ [Content] Goal stated — yes',
      '  ✗ Users named — none named',
    ]);
  });
  test('the command line treats failed verification as a failed turn and lists the failed items', () => {
    expect(turnExitCode({ success: false, status: 'failed_verification' })).toBe(1);
    expect(turnFailureType('failed_verification')).toBe('LoopwrightVerificationFailed');
    expect(turnStatusMessage({ status: 'failed_verification' })).toMatch(/still fails its checklist/);
    expect(turnNotes({ verification: report })).toEqual(['verification: prd: failed verification (1 of 2 items failed after 1 attempt)', 'failed: ✗ Users named — none named']);
  });
});

describe('settings', () => {
  test('--no-verify, --verify-attempts and their environment variables', () => {
    expect(modelSessionSettings({}, {})).toEqual({});
    expect(modelSessionSettings({ verify: false }, {})).toEqual({ verify: { enabled: false } });
    expect(modelSessionSettings({ verifyAttempts: 5 }, {})).toEqual({ verify: { maxAttempts: 5 } });
    expect(modelSessionSettings({}, { LOOPWRIGHT_VERIFY: 'off', LOOPWRIGHT_VERIFY_ATTEMPTS: '2' })).toEqual({ verify: { enabled: false, maxAttempts: 2 } });
    expect(modelSessionSettings({ verify: true }, { LOOPWRIGHT_VERIFY: 'off' })).toEqual({});
    expect(() => modelSessionSettings({}, { LOOPWRIGHT_VERIFY_ATTEMPTS: '11' })).toThrow(/LOOPWRIGHT_VERIFY_ATTEMPTS value '11' is invalid/);
  });
  test('the session input checks verify by field', () => {
    const base = { bundlePath: '/b', agentId: 'a', outputRoots: ['/o'] };
    expect(sessionInputProblem({ ...base, verify: { enabled: false, maxAttempts: 3 } })).toBeUndefined();
    expect(sessionInputProblem({ ...base, verify: { maxAttempts: 0 } })).toBe('verify.maxAttempts: expected a whole number from 1 to 10, got 0');
    expect(sessionInputProblem({ ...base, verify: { attempts: 2 } })).toMatch(/^verify\.attempts/);
  });
});

describe('Web UI details', () => {
  const state = { status: 'verifying', turn: 1, iteration: 2, maxIterations: 50, run: 1, usage: { totalTokens: 0 }, runningTools: [], pendingApprovals: [] } as unknown as SessionState;
  test('the phase, the document awaiting verification, and the last report', () => {
    expect(sessionDetails(state)).not.toContain('phase:');
    const details = sessionDetails({
      ...state,
      verify: { phase: 'verify', pending: { name: 'spec', checklist: '/b/checklist.md', document: '/p/docs/spec.md', attempts: 1, maxAttempts: 3 } },
      lastTurn: {
        turn: 1,
        success: true,
        status: 'completed',
        iterations: 4,
        response: 'Done.',
        verification: { status: 'verified', name: 'spec', attempts: 2, maxAttempts: 3, passed: 3, failed: 0, items: [], source: 'workflow' },
      },
    });
    expect(details).toContain('**verifying** · turn 1');
    expect(details).toContain('phase: **verify** · to verify: spec (/p/docs/spec.md) · attempt 1 of 3');
    expect(details).toContain('verification: spec: verified (3/3 items, attempt 2 of 3)');
    expect(sessionDetails({ ...state, verify: { phase: 'gather', pending: { name: 'spec', attempts: 0, maxAttempts: 3 } } })).toContain(
      'phase: **gather** · to verify: spec (not saved yet) · attempt 0 of 3',
    );
  });
});
