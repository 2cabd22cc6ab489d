/*
 * The "Examples:" section that ends every command's --help (issue #34): two to four command lines each, real ones
 * (test/cli/help-examples.test.ts parses every line with the command's own options). Keyed by the command's path.
 */
export const EXAMPLES = {
  chatload: [
    'chatload run -n 50 -p 4',
    'chatload run -u http://localhost:8000 -i conversations.json -p 16 --duration 300',
    'chatload sweep -u http://localhost:8000 --concurrency 1,4,16,64',
    'chatload compare results/run-a results/run-b',
  ],
  run: [
    'chatload run -n 50 -p 4',
    'chatload run -u http://localhost:8000 -m Qwen/Qwen2.5-7B-Instruct -i conversations.json -p 16 --duration 300',
    'chatload run -u http://localhost:8000 --session-rate 2 --duration 600 --goodput ttft:500 e2el:10000',
    'chatload run -n 200 -p 8 --repeat 3 --output-dir results/baseline',
  ],
  serve: ['chatload serve --port 8000', 'chatload serve --port 8000 --profile h100-8b --faults 500=0.01,reset=0.01', 'chatload serve --config sim.json --trace serve-trace.jsonl', 'chatload serve --replicas 4 --router sticky'],
  generate: ['chatload generate -i coding.json -o coding.jsonl --seed 1', 'chatload generate -i coding.json -o coding.json --print-stats'],
  convert: ['chatload convert sharegpt sharegpt.json conversations.json', 'chatload convert sharegpt sharegpt.jsonl conversations.jsonl --max-items 1000 --min-turns 4'],
  'convert sharegpt': [
    'chatload convert sharegpt sharegpt.json conversations.json',
    'chatload convert sharegpt sharegpt.jsonl conversations.jsonl --max-items 1000 --min-turns 4',
    'chatload convert sharegpt llava.json conversations.json --image-dir images/',
  ],
  sweep: [
    'chatload sweep -u http://localhost:8000 --concurrency 1,4,16,64',
    'chatload sweep -u http://localhost:8000 --session-rates 0.5,1,2,4 --duration 300 --repeat 3',
    'chatload sweep -u http://localhost:8000 --search --min-rate 0.5 --max-rate 8 --goodput ttft:500 e2el:10000 --duration 120',
    'chatload sweep -u http://localhost:8000 --concurrency 8,32,128 --cache-pressure',
  ],
  report: ['chatload report results/run-a', 'chatload report results/run-a --excel --csv', 'chatload report results/run-a -o run-a.html'],
  compare: ['chatload compare results/run-a results/run-b', 'chatload compare results/baseline results/tuned results/tuned-2 --html compare.html', 'chatload compare results/baseline results/candidate --fail-on "median_ttft_ms>+20%,output_throughput<-5%" --junit gates.xml'],
  merge: ['chatload merge results/shard-0 results/shard-1 -o results/merged', 'chatload merge results/shard-* -o results/merged --max-records 1000000', 'chatload merge "results/shard-*" --expect 4 --wait 2h -o results/merged'],
  trace: [
    'chatload trace stats mooncake_trace.jsonl',
    'chatload trace stats bailian.jsonl --kv-cache-tokens 1000000 --json',
    'chatload trace stats BurstGPT_1.csv --trace-filter model=GPT-4',
    'chatload trace synthesize mooncake_trace.jsonl -o busier.jsonl --rate-scale 2 --prefix-share 0.5',
  ],
  'trace stats': [
    'chatload trace stats mooncake_trace.jsonl --kv-cache-tokens 1000000',
    'chatload trace stats bailian.jsonl --input-format bailian --json',
    'chatload trace stats AzureLLMInferenceTrace_conv.csv --trace-window 0:600',
    'chatload trace stats BurstGPT_1.csv --trace-filter model=GPT-4,failed=keep',
  ],
  'trace synthesize': [
    'chatload trace synthesize mooncake_trace.jsonl -o busier.jsonl --rate-scale 2',
    'chatload trace synthesize mooncake_trace.jsonl -o shared.jsonl --prefix-share 0.6 --seed 1',
    'chatload trace synthesize AzureLLMInferenceTrace_code.csv -o longer.csv --isl-scale 1.5 --osl-scale 0.5',
  ],
  schema: ['chatload schema results > results.schema.json', 'chatload schema record'],
  completion: ['chatload completion bash > ~/.local/share/bash-completion/completions/chatload', 'chatload completion zsh > "${fpath[1]}/_chatload"', 'chatload completion fish > ~/.config/fish/completions/chatload.fish'],
} as const satisfies Record<string, readonly string[]>;

/** A command's path for EXAMPLES: `convert sharegpt`, `run`, or `chatload` for the program. */
export type ExamplesKey = keyof typeof EXAMPLES;

/** The Examples section of a command's --help, as commander's addHelpText('after', …) takes it. */
export function examplesText(key: ExamplesKey): string {
  return `\nExamples:\n${EXAMPLES[key].map((line) => `  ${line}`).join('\n')}`;
}
