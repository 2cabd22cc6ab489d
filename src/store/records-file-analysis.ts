import { analyzeAggregate, type RunAnalysis } from '../metrics/run-analysis.js';
import { RunAggregate, runAggregateOptions, type RunAggregateOptions } from '../metrics/run-aggregate.js';
import type { SummaryPlan } from '../options/run-plan.js';
import { streamRequestsJsonl } from './requests-jsonl.js';

/**
 * The analysis of a requests.jsonl, streamed into a RunAggregate (exact up to `exactRecords`, histograms past it), for
 * a run whose own aggregate is missing (a worker thread that died took its part with it).
 */
export async function analyzeRecordsFile(path: string, options: Pick<SummaryPlan, 'goodput' | 'warmupPercentages'> & Partial<Pick<SummaryPlan, 'metricPercentiles'>>, limits: Pick<RunAggregateOptions, 'exactRecords'> = {}): Promise<RunAnalysis> {
  const aggregate = new RunAggregate({ ...runAggregateOptions(options), ...limits });
  await streamRequestsJsonl(path, (r) => aggregate.add(r));
  return analyzeAggregate(aggregate, (visit) => streamRequestsJsonl(path, visit));
}
