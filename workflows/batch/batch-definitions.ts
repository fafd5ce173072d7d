/** Queries of the batch workflow; clients import these definitions too. */
import { defineQuery } from '@temporalio/workflow';
import type { BatchState } from '../../common/batch-types';

/** Totals of a batch: items, started, ok, failed, cancelled, running, by turn status, tokens. */
export const batchStateQuery = defineQuery<BatchState>('batchState');
