/**
 * History per turn: one durable turn per shape (10 and 50 iterations, small and 10 KB reads) in a
 * fresh session, and how the history compares with what it records: the ratio of the history's
 * protobuf bytes to the transcript's own bytes (UTF-8 JSON of every message the `messages` query
 * returns: system messages, the user message, assistant and tool messages).
 */
import { benchTurnMessage } from './bench-responder';
import type { DurableBench } from './durable-loop';
import { measureHistory, type HistoryFigures } from './history-size';
import { measureTimeline, type TimelineFigures } from './history-timeline';
import { transcriptBytes } from './transcript';

/** The history of one turn and the transcript it records. */
export interface HistoryTurnFigures {
  iterations: number;
  file: string;
  /** From send to the turn's result (one run: informative only). */
  turnMs: number;
  history: HistoryFigures;
  transcript: { messages: number; bytes: number };
  /** history protobuf bytes / transcript bytes. */
  ratio: number;
  /** The run continued as new during the turn: its history (the first run's) covers only part of it. */
  continuedAsNew: boolean;
  timeline: TimelineFigures;
}

/** Goal for the history / transcript ratio of a 50-iteration turn reading the 10 KB file. */
export const HISTORY_RATIO_TARGET = 2;

/** Run one turn per shape and measure its history. */
export async function measureHistoryTurns(durable: DurableBench, shapes: readonly { iterations: number; file: string }[], progress: (line: string) => void): Promise<HistoryTurnFigures[]> {
  const figures: HistoryTurnFigures[] = [];
  for (const { iterations, file } of shapes) {
    progress(`history of a ${iterations}-iteration turn reading ${file}`);
    const turn = await durable.runTurn(benchTurnMessage(iterations, file), iterations);
    if (turn.result.status !== 'completed' || turn.result.iterations !== iterations) {
      throw new Error(`history turn: expected ${iterations} completed iterations, got ${turn.result.iterations} (${turn.result.status})`);
    }
    const history = measureHistory(turn.history);
    const bytes = transcriptBytes(turn.transcript);
    figures.push({
      iterations,
      file,
      turnMs: turn.ms,
      history,
      transcript: { messages: turn.transcript.length, bytes },
      ratio: history.protoBytes / bytes,
      continuedAsNew: turn.continuedAsNew,
      timeline: measureTimeline(turn.history),
    });
  }
  return figures;
}
