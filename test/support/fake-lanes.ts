/**
 * The tests of one file side by side (`test.concurrent`) on one worker and one fake model: each test
 * opens a lane, a copy of the example bundle in a folder of its own. A session's requests name that
 * folder (the system prompt carries the bundle's root), so the fake answers each request from the
 * script of the lane it names and records it there: a lane has the fake's script, responder,
 * requests and waits, as if the fake were the test's alone. A request that names no lane is answered
 * with a 500 saying so.
 *
 * What stays shared is the fake's server-wide settings (limits, streaming, response_format): a test
 * that changes them runs on its own, after the file's side-by-side tests.
 */
import { copyExampleBundle, startSessionHarness, type SessionHarness } from './session-harness';
import type { LoopwrightClient } from '../../client/session-client';
import type { FakeOpenAI } from '../../fake-model/server';
import type { RecordedRequest } from '../../fake-model/recorded-request';
import { fault, type Responder, type Step } from '../../fake-model/steps';

/** One test's view of the shared fake model. */
export interface FakeLane {
  /** The lane's copy of the example bundle (start its sessions on this), or the folder it was opened on. */
  readonly bundle: string;
  /** Requests of the lane's sessions, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Append steps to the lane's script; each of its requests takes the first one left. */
  enqueue(...steps: Step[]): void;
  /** Answer the lane's requests with `fn` once its script is empty (undefined removes it). */
  setResponder(fn: Responder | undefined): void;
  /** Resolve once at least `n` of the lane's requests arrived; reject after `timeoutMs` (default 5000). */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolve once at least `n` of the lane's requests were aborted by their client; reject after `timeoutMs` (default 5000). */
  waitForAborts(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
}

interface Lane extends FakeLane {
  readonly key: string;
  readonly script: Step[];
  responder: Responder | undefined;
  readonly waiters: Set<() => void>;
}

/** Lanes on `fake`: installs the routing responder; `close()` removes the bundle copies. */
export class FakeLanes {
  private readonly lanes: Lane[] = [];
  private readonly cleanups: (() => void)[] = [];
  private readonly laneOf = new WeakMap<RecordedRequest, Lane | null>();

  constructor(private readonly fake: FakeOpenAI) {
    fake.setResponder((request, index) => this.answer(request, index));
    const wake = (request: RecordedRequest) => {
      const lane = this.find(request);
      if (!lane) return;
      if (!lane.requests.includes(request)) lane.requests.push(request);
      for (const waiter of [...lane.waiters]) waiter();
    };
    fake.events.on('request', wake);
    fake.events.on('aborted', wake);
  }

  /**
   * A new lane with its own copy of the example bundle; or, given `folder`, a lane on a folder of the
   * test's own (no other lane's) holding the bundle or project its sessions run on, so that their
   * prompts name paths inside it; the test removes it.
   */
  open(folder?: string): FakeLane {
    const copy = folder === undefined ? copyExampleBundle('lw-lane-') : { root: folder.replace(/\/+$/, ''), bundle: folder, cleanup: () => undefined };
    this.cleanups.push(copy.cleanup);
    const requests: RecordedRequest[] = [];
    const waiters = new Set<() => void>();
    const waitFor = (pick: () => RecordedRequest[], n: number, timeoutMs: number, what: string) =>
      new Promise<RecordedRequest[]>((resolve, reject) => {
        const check = () => {
          const picked = pick();
          if (picked.length < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(picked);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake lane: ${pick().length} of ${n} ${what} after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    const lane: Lane = {
      key: `${copy.root}/`,
      bundle: copy.bundle,
      requests,
      script: [],
      responder: undefined,
      waiters,
      enqueue: (...steps) => void lane.script.push(...steps),
      setResponder: (fn) => void (lane.responder = fn),
      waitForRequests: (n, timeoutMs = 5000) => waitFor(() => requests, n, timeoutMs, 'requests'),
      waitForAborts: (n, timeoutMs = 5000) => waitFor(() => requests.filter((r) => r.aborted), n, timeoutMs, 'aborted requests'),
    };
    this.lanes.push(lane);
    return lane;
  }

  /** Removes every lane's bundle copy. */
  close(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }

  private answer(request: RecordedRequest, index: number): Step | Promise<Step> {
    const lane = this.find(request);
    if (!lane) return fault(500, { message: `fake lanes: request #${index + 1} names no lane's bundle` });
    const scripted = lane.script.shift();
    if (scripted) return scripted;
    if (lane.responder) return lane.responder(request, lane.requests.indexOf(request));
    return fault(500, { message: `fake lanes: the lane of ${lane.bundle} has no step left for its request #${lane.requests.indexOf(request) + 1}` });
  }

  private find(request: RecordedRequest): Lane | undefined {
    let lane = this.laneOf.get(request);
    if (lane === undefined) {
      const body = JSON.stringify(request.body ?? '');
      lane = this.lanes.find((l) => body.includes(l.key)) ?? null;
      this.laneOf.set(request, lane);
    }
    return lane ?? undefined;
  }
}

/** A workflow test file's set-up for side-by-side tests: the harness, lanes on its fake model, and one worker. */
export interface LaneHarness {
  h: SessionHarness;
  lanes: FakeLanes;
  /** A client of the worker started on a fresh task queue. */
  loopwright: LoopwrightClient;
  /** Stops the worker, the servers and removes the lanes' copies. */
  close(): Promise<void>;
}

/** Starts a `LaneHarness`, its worker made with `worker` (in `beforeAll`; there is no reset between tests: each test's lane is its own). */
export async function startLaneHarness(worker?: Parameters<SessionHarness['startWorker']>[0]): Promise<LaneHarness> {
  const h = await startSessionHarness();
  const lanes = new FakeLanes(h.fake);
  const { loopwright } = await h.startWorker(worker);
  return {
    h,
    lanes,
    loopwright,
    close: async () => {
      await h.close();
      lanes.close();
    },
  };
}
