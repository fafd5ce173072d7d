/**
 * A custom tool in TypeScript: `get_ticket` looks a ticket up in the team's tracker (a small table
 * here; an HTTP call to your tracker in real life). Each call runs as an activity on the worker that
 * registered the tool, with retries, the session's timeout and cancellation on interrupt.
 */
import { z } from 'zod';
import { defineTool, ToolError } from 'loopwright/worker';

/** The tracker this example pretends to have. */
const TICKETS: Record<string, { title: string; status: string; owner: string }> = {
  'TL-7': { title: 'Borrowers can see which tools are free', status: 'open', owner: 'Sam' },
  'TL-9': { title: 'Overdue reminders by e-mail', status: 'in progress', owner: 'Alex' },
};

export const getTicket = defineTool({
  name: 'get_ticket',
  description: "A ticket of the team's tracker by its id (e.g. TL-7): title, status and owner",
  // The JSON schema the model sees, and the check of the arguments it sends.
  parameters: z.object({ id: z.string().describe('The ticket id, e.g. TL-7') }),
  // A read: it never waits for approval under the "writes" policy, and may run as a local activity.
  access: 'read',
  // Shown in the Web UI, in approvals and in progress lines: `get_ticket TL-7`.
  target: 'id',
  run: async ({ id }, { signal }) => {
    signal.throwIfAborted();
    const ticket = TICKETS[id.toUpperCase()];
    // A ToolError goes back to the model at once, as an error result it can act on; other exceptions are retried.
    if (!ticket) throw new ToolError(`No ticket ${id}; known tickets: ${Object.keys(TICKETS).join(', ')}`);
    // An object is sent to the model as the call's `result`.
    return { id: id.toUpperCase(), ...ticket };
  },
});
