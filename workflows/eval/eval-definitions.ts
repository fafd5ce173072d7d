/** Queries of the eval workflow; clients import these definitions too. */
import { defineQuery } from '@temporalio/workflow';
import type { EvalState } from '../../common/eval/eval-types';

/** Where an eval stands: cases started, scored, with errors, changed; running; tokens on both sides. */
export const evalStateQuery = defineQuery<EvalState>('evalState');
