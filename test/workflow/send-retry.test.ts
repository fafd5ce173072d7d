/**
 * A `send` whose answer is lost in transit is repeated by the client's gRPC retry, under the same
 * update id. Temporal drops a repeated update only within a run, so a repeat that reached the
 * session's next run would run the turn again (seen on the cluster suite, when a history host died
 * while a turn that continues as new was running). Here the answer is lost on purpose, by a gRPC
 * interceptor, and released only once the session has moved to another run and finished the turn:
 * the turn runs once and `send` returns it. So too for the server's other "ask again" answers: its
 * deadline, a failed workflow task, an update no worker processed. Real dev server and worker, the
 * fake model.
 */
import { InterceptingCall, type Interceptor, Metadata, status as grpcStatus, type StatusObject } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { ChatMessage } from '../../common/messages';
import { LoopwrightClient } from '../../client/session-client';
import { startTurn } from '../../serve/start-turn';
import { type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { useSessionHarness } from '../support/session-harness';

jest.setTimeout(60_000);

const DescribeResponse = temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
const UpdateRequest = temporal.api.workflowservice.v1.UpdateWorkflowExecutionRequest;
const UpdateResponse = temporal.api.workflowservice.v1.UpdateWorkflowExecutionResponse;

const s = useSessionHarness();

/** Runs `body` with a client whose connection goes through `interceptor` (on the file's task queue), then closes the connection. */
async function throughInterceptor(interceptor: Interceptor, body: (loopwright: LoopwrightClient, client: Client) => Promise<void>): Promise<void> {
  const connection = await Connection.connect({ address: s.h.server.address, interceptors: [interceptor] });
  try {
    const client = new Client({ connection });
    await body(new LoopwrightClient(client, s.loopwright.taskQueue), client);
  } finally {
    await connection.close();
  }
}

/** `iterations=<n>`: n model calls, each but the last reading a file. */
function loop(request: RecordedRequest): Step {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const n = Number(/iterations=(\d+)/.exec(String(messages[lastUser]?.content ?? ''))?.[1] ?? 1);
  const call = messages.slice(lastUser).filter((m) => m.role === 'assistant').length + 1;
  if (call >= n) return text(`done after ${call} calls`);
  return toolCalls([{ id: `call_${call}`, name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/intake/template.md' } }]);
}

/**
 * A gRPC interceptor that throws away the first UpdateWorkflowExecution answer (as if the connection
 * had dropped) and, once `when` resolves, makes the same request again, as the SDK's retry
 * interceptor does; `lost()` counts the answers thrown away.
 */
function repeatFirstUpdate(when: () => Promise<void>): { interceptor: Interceptor; lost: () => number } {
  let armed = true;
  let lost = 0;
  const interceptor: Interceptor = (options, nextCall) => {
    if (!armed || !options.method_definition.path.endsWith('/UpdateWorkflowExecution')) return new InterceptingCall(nextCall(options));
    armed = false;
    let request: unknown;
    return new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        next(metadata, {
          onReceiveMetadata: (value, forward) => forward(value),
          onReceiveMessage: () => (lost += 1),
          onReceiveStatus: () => {
            void when().then(() => {
              const again = nextCall(options);
              again.start(metadata, { onReceiveMessage: (message) => listener.onReceiveMessage(message), onReceiveStatus: (status) => listener.onReceiveStatus(status) });
              again.sendMessage(request);
              again.halfClose();
            });
          },
        });
      },
      sendMessage(message, next) {
        request = message;
        next(message);
      },
    });
  };
  return { interceptor, lost: () => lost };
}

test('send: an answer lost in transit and repeated after the session continued as new runs the turn once', async () => {
  s.h.fake.setResponder(loop);
  const session = await s.loopwright.start({ bundlePath: s.bundle, agentId: 'facilitator', continueAsNew: { maxHistoryEvents: 30 } });
  const firstRun = (await session.workflow.describe()).runId;

  // The first UpdateWorkflowExecution answer is lost; once the turn is over, in a later run, the call is made again.
  const turnOver = async (): Promise<void> => {
    for (;;) {
      const state = await session.state();
      if (state.lastTurn?.turn === 1 && state.run > 1) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const repeat = repeatFirstUpdate(turnOver);
  await throughInterceptor(repeat.interceptor, async (lossy) => {
    const result = await lossy.session(session.workflowId).send('iterations=8');
    expect(repeat.lost()).toBe(1);
    expect(result).toMatchObject({ success: true, turn: 1, iterations: 8, response: 'done after 8 calls' });
    const state = await session.state();
    expect(state.run).toBeGreaterThan(1);
    expect((await session.workflow.describe()).runId).not.toBe(firstRun);
    // One turn, each model call once.
    expect(state.turn).toBe(1);
    expect(s.h.fake.requests).toHaveLength(8);
  });
  await session.end();
});

test('send: an update call the server answered with a deadline (a loaded server) is asked again under its id: the turn runs once and send returns it', async () => {
  s.h.fake.setResponder(loop);
  const session = await s.loopwright.start({ bundlePath: s.bundle, agentId: 'facilitator' });
  // The first UpdateWorkflowExecution reaches the server, which takes the message; its answer becomes
  // DEADLINE_EXCEEDED, as a server too busy to answer within its own deadline says it.
  let timedOut = 0;
  const deadlineOnce: Interceptor = (options, nextCall) => {
    if (timedOut > 0 || !options.method_definition.path.endsWith('/UpdateWorkflowExecution')) return new InterceptingCall(nextCall(options));
    timedOut += 1;
    return new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        next(metadata, {
          onReceiveMetadata: (value, forward) => forward(value),
          // The answer is dropped and the call ends with the deadline, straight to the caller's listener
          // (a status forwarded through grpc-js would wait for the dropped message).
          onReceiveMessage: () => undefined,
          onReceiveStatus: (status: StatusObject) => listener.onReceiveStatus({ ...status, code: grpcStatus.DEADLINE_EXCEEDED, details: 'context deadline exceeded' }),
        });
      },
    });
  };
  await throughInterceptor(deadlineOnce, async (busy) => {
    const result = await busy.session(session.workflowId).send('iterations=3');
    expect(timedOut).toBe(1);
    expect(result).toMatchObject({ success: true, turn: 1, iterations: 3, response: 'done after 3 calls' });
    expect((await session.state()).turn).toBe(1);
    expect(s.h.fake.requests).toHaveLength(3);
  });
  await session.end();
});

/** What the server answers when the workflow task that carried an update failed (a history host lost while a worker completed it). */
const TASK_FAILED = 'Unable to perform workflow execution update due to unexpected workflow task failure.';

/**
 * A gRPC interceptor that answers the first UpdateWorkflowExecution with TASK_FAILED (FAILED_PRECONDITION,
 * the server's WorkflowNotReady): `taken`, after the server took the update (its answer is dropped);
 * else without sending it. `ids` are the update ids of every UpdateWorkflowExecution, in order.
 */
function taskFailedOnce(taken: boolean): { interceptor: Interceptor; ids: string[]; failed: () => number } {
  const ids: string[] = [];
  let failed = 0;
  const interceptor: Interceptor = (options, nextCall) => {
    if (!options.method_definition.path.endsWith('/UpdateWorkflowExecution')) return new InterceptingCall(nextCall(options));
    const first = failed === 0;
    if (first) failed += 1;
    const answer = (listener: { onReceiveStatus(status: StatusObject): void }): void =>
      listener.onReceiveStatus({ code: grpcStatus.FAILED_PRECONDITION, details: TASK_FAILED, metadata: new Metadata() });
    return new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        if (first && !taken) return void setImmediate(() => answer(listener));
        next(metadata, {
          onReceiveMetadata: (value, forward) => forward(value),
          onReceiveMessage: (message, forward) => (first ? undefined : forward(message)),
          onReceiveStatus: (status, forward) => (first ? answer(listener) : forward(status)),
        });
      },
      sendMessage(message: Uint8Array, next) {
        ids.push(String(UpdateRequest.decode(message).request?.meta?.updateId));
        if (!first || taken) next(message);
      },
      halfClose(next) {
        if (!first || taken) next();
      },
    });
  };
  return { interceptor, ids, failed: () => failed };
}

test('send: an update the server answers with a failed workflow task (a history host lost) is asked again under its id: the turn runs once and send returns it', async () => {
  s.h.fake.setResponder(loop);
  const session = await s.loopwright.start({ bundlePath: s.bundle, agentId: 'facilitator' });
  // The first call reaches the server, which takes the message; its answer becomes the task failure.
  const failing = taskFailedOnce(true);
  await throughInterceptor(failing.interceptor, async (client) => {
    const result = await client.session(session.workflowId).send('iterations=3');
    expect(failing.failed()).toBe(1);
    expect(failing.ids.length).toBeGreaterThanOrEqual(2);
    expect(new Set(failing.ids).size).toBe(1);
    expect(result).toMatchObject({ success: true, turn: 1, iterations: 3, response: 'done after 3 calls' });
    expect((await session.state()).turn).toBe(1);
    expect(s.h.fake.requests).toHaveLength(3);
  });
  await session.end();
});

test('web: a message whose update the server answers with a failed workflow task, not taking it, is offered again and starts one turn', async () => {
  s.h.fake.setResponder(loop);
  const session = await s.loopwright.start({ bundlePath: s.bundle, agentId: 'facilitator' });
  // As the web API has it: the session is ready before a message comes (a turn taken while the
  // agent still loads is numbered only once it starts).
  while ((await session.state()).status !== 'waiting_for_user') await new Promise((resolve) => setTimeout(resolve, 25));
  // The first call never reaches the server; its answer is the task failure.
  const failing = taskFailedOnce(false);
  await throughInterceptor(failing.interceptor, async (loopwright, client) => {
    const handle = loopwright.session(session.workflowId);
    await expect(startTurn(handle, client, 'iterations=2')).resolves.toBe(1);
    expect(failing.failed()).toBe(1);
    expect(failing.ids).toHaveLength(2);
    await expect(session.awaitTurn(1)).resolves.toMatchObject({ success: true, turn: 1, iterations: 2, response: 'done after 2 calls' });
    expect((await session.state()).turn).toBe(1);
    expect(s.h.fake.requests).toHaveLength(2);
  });
  await session.end();
});

test('send: an update the server answers "wasn\'t processed by worker" (no worker ran it) is made again under a new id: the turn runs once', async () => {
  s.h.fake.setResponder(loop);
  const session = await s.loopwright.start({ bundlePath: s.bundle, agentId: 'facilitator' });
  // The first UpdateWorkflowExecution reaches the worker under a name it has no handler for, so the
  // workflow rejects it without running anything; its answer is given the text of the server's own
  // rejection of an update no worker processed.
  const ids: string[] = [];
  let rejected = 0;
  const unprocessedOnce: Interceptor = (options, nextCall) => {
    if (!options.method_definition.path.endsWith('/UpdateWorkflowExecution')) return new InterceptingCall(nextCall(options));
    const first = ids.length === 0;
    return new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        next(metadata, {
          onReceiveMetadata: (value, forward) => forward(value),
          onReceiveMessage: (message: Uint8Array, forward) => {
            const answer = UpdateResponse.decode(message);
            if (!first || !answer.outcome?.failure) return forward(message);
            rejected += 1;
            answer.outcome.failure = { message: "Workflow Update is rejected because it wasn't processed by worker. Probably, Workflow Update is not supported by the worker." };
            forward(Buffer.from(UpdateResponse.encode(answer).finish()));
          },
          onReceiveStatus: (status, forward) => forward(status),
        });
      },
      sendMessage(message: Uint8Array, next) {
        const request = UpdateRequest.decode(message);
        ids.push(String(request.request?.meta?.updateId));
        if (!first || !request.request?.input) return next(message);
        request.request.input.name = 'noSuchUpdate';
        next(Buffer.from(UpdateRequest.encode(request).finish()));
      },
    });
  };
  await throughInterceptor(unprocessedOnce, async (client) => {
    const result = await client.session(session.workflowId).send('iterations=2');
    expect(rejected).toBe(1);
    expect(ids).toHaveLength(2);
    expect(ids[1]).not.toBe(ids[0]);
    expect(result).toMatchObject({ success: true, turn: 1, iterations: 2, response: 'done after 2 calls' });
    expect((await session.state()).turn).toBe(1);
    expect(s.h.fake.requests).toHaveLength(2);
  });
  await session.end();
});

test('send: a message that reaches a run that has just ended, without being taken there, goes to the newest run once', async () => {
  s.h.fake.setResponder(loop);
  const session = await s.loopwright.start({ bundlePath: s.bundle, agentId: 'facilitator', continueAsNew: { maxHistoryEvents: 30 } });
  const firstRun = (await session.workflow.describe()).runId;
  await expect(session.send('iterations=8')).resolves.toMatchObject({ success: true, turn: 1 });
  expect((await session.workflow.describe()).runId).not.toBe(firstRun);

  // The client looks the session up and is told of the first run, as if the newest run had been that one
  // and had ended between the look-up and the call: the message reaches a run that has ended without it.
  let armed = true;
  const staleLookUp: Interceptor = (options, nextCall) => {
    if (!armed || !options.method_definition.path.endsWith('/DescribeWorkflowExecution')) return new InterceptingCall(nextCall(options));
    armed = false;
    return new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        next(metadata, {
          // The client decodes answers after gRPC hands them over: decode, re-address, encode.
          onReceiveMessage(message: Uint8Array, forward) {
            const response = DescribeResponse.decode(message);
            response.workflowExecutionInfo!.execution!.runId = firstRun;
            forward(Buffer.from(DescribeResponse.encode(response).finish()));
          },
        });
      },
    });
  };
  await throughInterceptor(staleLookUp, async (redirected) => {
    const result = await redirected.session(session.workflowId).send('iterations=3');
    expect(armed).toBe(false);
    expect(result).toMatchObject({ success: true, turn: 2, iterations: 3, response: 'done after 3 calls' });
    expect((await session.state()).turn).toBe(2);
    expect(s.h.fake.requests).toHaveLength(11);
  });
  await session.end();
});

test('budget: a raise whose answer is lost in transit and repeated after the session continued as new is applied once', async () => {
  s.h.fake.setResponder(loop);
  const session = await s.loopwright.start({ bundlePath: s.bundle, agentId: 'facilitator', continueAsNew: { maxHistoryEvents: 30 }, budget: { sessionTokens: 1_000_000 } });
  const firstRun = (await session.workflow.describe()).runId;
  // A long turn, during which the session moves to a new run; the raise is sent while the first run still runs it.
  const turn = session.send('iterations=8');
  await s.h.fake.waitForRequests(1, 20_000);
  const movedOn = async (): Promise<void> => {
    while ((await session.workflow.describe()).runId === firstRun) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  // The first UpdateWorkflowExecution answer is lost; once the session is in its next run, the same request is made again.
  const repeat = repeatFirstUpdate(movedOn);
  await throughInterceptor(repeat.interceptor, async (lossy) => {
    const raised = await lossy.session(session.workflowId).budget({ sessionTokens: 500 });
    expect(repeat.lost()).toBe(1);
    expect(raised.sessionTokens.limit).toBe(1_000_500);
  });
  await expect(turn).resolves.toMatchObject({ success: true, turn: 1 });
  const state = await session.state();
  expect(state.run).toBeGreaterThan(1);
  // Raised once, whichever run the repeat reached.
  expect(state.budget?.sessionTokens.limit).toBe(1_000_500);
  await session.end();
});
