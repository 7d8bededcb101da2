import type { FunctionTool } from '../prompt/types';

/**
 * How the recall tool is told apart from the host's tools (docs/design.md, "Recall"): it carries
 * this package's key in its `providerOptions`, which the AI SDK (6 and 7) hands the model call with
 * the tool's definition. Providers read only their own key, so the marker goes no further.
 */
export const RECALL_PROVIDER_OPTIONS = { compaction: { recall: true } } as const;

/** The name the host registered the recall tool under in a step's tools, or undefined without it. */
export function recallToolName(tools: readonly FunctionTool[] | undefined): string | undefined {
  for (const tool of tools ?? []) {
    const options = tool.providerOptions as { compaction?: { recall?: unknown } } | undefined;
    if (options?.compaction?.recall === true && typeof tool.name === 'string') return tool.name;
  }
  return undefined;
}
