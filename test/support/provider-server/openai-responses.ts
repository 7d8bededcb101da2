// OpenAI Responses: POST /v1/responses (JSON, or SSE with `stream: true`).
//
// Like the real API with `store: true` (the clients' default), the server keeps the items it
// returned, so the `item_reference` inputs the clients send for earlier assistant messages
// resolve (and count) as the original items; `previous_response_id` works the same way.
//
// Native compaction (compaction.ts): a request whose `input` ends with `{ type: 'compaction_trigger' }`
// is answered with a single `compaction` output item; a `compaction` input item (or, with
// `store: true`, an `item_reference` to one) stands for everything before it.
import { compactInto, decryptCompaction, encryptCompaction, finishCompaction, userDigests, type CompactionMarker, type CompactionPayload } from './compaction';
import { isRecord, jsonString, RequestError, str, type Message, type ParsedRequest, type Part, type ToolChoice, type ToolDefinition } from './conversation';
import { openaiResponsesOverflow, openaiResponsesOverflowFrame } from './errors';
import { argDeltas, SseWriter, sendJson, type ReplyContext, type ReplySink } from './http';
import { splitDeltas } from './tokens';

class Bounded<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly limit: number) {}
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.limit) {
      const first = this.map.keys().next();
      if (!first.done) this.map.delete(first.value);
    }
  }
}

export class ResponsesStore {
  readonly items = new Bounded<Message>(50_000);
  readonly responses = new Bounded<Message[]>(2_000);
  /** Compaction items returned with `store: true`: id -> encrypted content. */
  readonly compactions = new Bounded<string>(2_000);
}

export interface ParsedResponsesRequest extends ParsedRequest {
  store: boolean;
  /** The input ends with a `compaction_trigger` item. */
  nativeCompaction: boolean;
}

function contentParts(content: unknown, where: string): Part[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw new RequestError(400, `Invalid type for '${where}': expected one of a string or array of objects.`, where, 'invalid_type');
  const parts: Part[] = [];
  content.forEach((item, i) => {
    if (!isRecord(item)) throw new RequestError(400, `Invalid type for '${where}[${i}]': expected an object.`, `${where}[${i}]`, 'invalid_type');
    switch (item.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
      case 'summary_text':
        parts.push({ type: 'text', text: str(item.text) });
        break;
      case 'refusal':
        parts.push({ type: 'text', text: str(item.refusal) });
        break;
      case 'input_image':
        parts.push({ type: 'image' });
        break;
      case 'input_file':
        parts.push({ type: 'file', name: str(item.filename) || undefined });
        break;
      default:
        parts.push({ type: 'text', text: jsonString(item) });
    }
  });
  return parts;
}

function outputParts(output: unknown): { text: string; images: number } {
  if (typeof output === 'string') return { text: output, images: 0 };
  if (!Array.isArray(output)) return { text: jsonString(output), images: 0 };
  let text = '';
  let images = 0;
  for (const item of output) {
    if (isRecord(item) && (item.type === 'input_image' || item.type === 'input_file')) images++;
    else if (isRecord(item) && typeof item.text === 'string') text += item.text;
    else text += jsonString(item);
  }
  return { text, images };
}

export function parseResponsesRequest(body: Record<string, unknown>, store: ResponsesStore): ParsedResponsesRequest {
  if (typeof body.model !== 'string' || body.model.length === 0) throw new RequestError(400, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  const input = body.input;
  if (input === undefined && typeof body.previous_response_id !== 'string') {
    throw new RequestError(400, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  }

  const messages: Message[] = [];
  let marker: CompactionMarker | undefined;
  let nativeCompaction = false;
  const compact = (payload: CompactionPayload) => {
    marker = compactInto(messages, payload);
  };
  if (typeof body.previous_response_id === 'string') {
    const previous = store.responses.get(body.previous_response_id);
    if (!previous) {
      throw new RequestError(400, `Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_id', 'previous_response_not_found');
    }
    // instructions are not carried over from the previous response
    messages.push(...previous.filter((m) => m.role !== 'system'));
  }
  if (typeof body.instructions === 'string' && body.instructions.length > 0) {
    messages.unshift({ role: 'system', parts: [{ type: 'text', text: body.instructions }] });
  }

  if (typeof input === 'string') {
    messages.push({ role: 'user', parts: [{ type: 'text', text: input }] });
  } else if (Array.isArray(input)) {
    input.forEach((item, i) => {
      const where = `input[${i}]`;
      if (!isRecord(item)) throw new RequestError(400, `Invalid type for '${where}': expected an object.`, where, 'invalid_type');
      const type = item.type ?? 'message';
      switch (type) {
        case 'message': {
          const role = item.role;
          if (role !== 'system' && role !== 'developer' && role !== 'user' && role !== 'assistant') {
            throw new RequestError(400, `Invalid value: '${String(role)}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`, `${where}.role`, 'invalid_value');
          }
          messages.push({ role: role === 'developer' ? 'system' : role, parts: contentParts(item.content, `${where}.content`) });
          break;
        }
        case 'function_call':
          messages.push({ role: 'assistant', parts: [{ type: 'tool-call', id: str(item.call_id), name: str(item.name), args: jsonString(item.arguments) }] });
          break;
        case 'function_call_output': {
          const { text, images } = outputParts(item.output);
          messages.push({ role: 'tool', parts: [{ type: 'tool-result', id: str(item.call_id), text, ...(images > 0 ? { images } : {}) }] });
          break;
        }
        case 'reasoning': {
          const summary = Array.isArray(item.summary) ? item.summary : [];
          messages.push({
            role: 'assistant',
            parts: summary.filter(isRecord).map((s) => ({ type: 'reasoning' as const, text: str(s.text) })),
          });
          break;
        }
        case 'compaction':
          compact(decryptCompaction(item.id, item.encrypted_content, where));
          break;
        case 'compaction_trigger':
          if (i !== input.length - 1) {
            throw new RequestError(400, `Invalid input: a 'compaction_trigger' item must be the final input item.`, where, 'invalid_value');
          }
          nativeCompaction = true;
          break;
        case 'item_reference': {
          const id = str(item.id);
          const compaction = store.compactions.get(id);
          if (compaction !== undefined) {
            compact(decryptCompaction(id, compaction, where));
            break;
          }
          const stored = store.items.get(id);
          if (!stored) {
            throw new RequestError(
              404,
              `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
              'input',
            );
          }
          messages.push(stored);
          break;
        }
        default:
          // other item kinds (hosted tool calls and outputs ...) count as their JSON
          messages.push({ role: 'assistant', parts: [{ type: 'text', text: jsonString(item) }] });
      }
    });
  } else if (input !== undefined) {
    throw new RequestError(400, "Invalid type for 'input': expected one of a string or array of input items.", 'input', 'invalid_type');
  }
  finishCompaction(messages, marker);

  const tools: ToolDefinition[] = [];
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      if (!isRecord(tool)) continue;
      if (tool.type === 'function') tools.push({ name: str(tool.name), description: str(tool.description), schema: tool.parameters });
      else tools.push({ name: str(tool.type), description: '', schema: undefined });
    }
  }

  let toolChoice: ToolChoice = 'auto';
  const tc = body.tool_choice;
  if (tc === 'none' || tc === 'required' || tc === 'auto') toolChoice = tc;
  else if (isRecord(tc) && tc.type === 'function' && typeof tc.name === 'string') toolChoice = { name: tc.name };

  return {
    model: body.model,
    stream: body.stream === true,
    messages,
    tools,
    toolChoice,
    maxOutputTokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : undefined,
    store: body.store !== false,
    nativeCompaction,
  };
}

function usageOf(ctx: ReplyContext) {
  return {
    input_tokens: ctx.usage.input,
    input_tokens_details: { cached_tokens: ctx.usage.cacheRead },
    output_tokens: ctx.usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: ctx.usage.input + ctx.usage.output,
  };
}

function responseShell(ctx: ReplyContext, id: string, createdAt: number) {
  const b = ctx.body;
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress' as string,
    background: false,
    error: null,
    incomplete_details: null as null | { reason: string },
    instructions: typeof b.instructions === 'string' ? b.instructions : null,
    max_output_tokens: typeof b.max_output_tokens === 'number' ? b.max_output_tokens : null,
    max_tool_calls: null,
    model: ctx.request.model,
    output: [] as unknown[],
    parallel_tool_calls: b.parallel_tool_calls !== false,
    previous_response_id: typeof b.previous_response_id === 'string' ? b.previous_response_id : null,
    prompt_cache_key: null,
    reasoning: { effort: null, summary: null },
    safety_identifier: null,
    service_tier: 'default',
    store: b.store !== false,
    temperature: typeof b.temperature === 'number' ? b.temperature : 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: b.tool_choice ?? 'auto',
    tools: Array.isArray(b.tools) ? b.tools : [],
    top_logprobs: 0,
    top_p: typeof b.top_p === 'number' ? b.top_p : 1,
    truncation: 'disabled',
    usage: null as unknown,
    user: null,
    metadata: {},
  };
}

/** Overflow: HTTP 400 JSON, or (streaming) HTTP 200 with `response.created`, `response.in_progress`, then the error frame. */
export async function sendResponsesOverflow(res: ReplySink, ctx: Omit<ReplyContext, 'reply' | 'usage'>): Promise<void> {
  if (!ctx.request.stream) {
    sendJson(res, 400, openaiResponsesOverflow());
    return;
  }
  const shell = responseShell({ ...ctx, reply: { text: '', toolCalls: [], finishReason: 'stop' }, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }, ctx.ids.hex('resp_', 48), Math.floor(Date.now() / 1000));
  const sse = new SseWriter(res, ctx, true);
  await sse.send({ type: 'response.created', sequence_number: 0, response: shell }, 'response.created');
  await sse.send({ type: 'response.in_progress', sequence_number: 1, response: shell }, 'response.in_progress');
  await sse.send(openaiResponsesOverflowFrame(2), 'error');
  sse.end();
}

/** Sends the reply; stores its items (and the whole exchange) for later `item_reference` / `previous_response_id`. */
export async function sendResponses(res: ReplySink, ctx: ReplyContext, store: ResponsesStore, persist: boolean): Promise<void> {
  const { reply, request } = ctx;
  const id = ctx.ids.hex('resp_', 48);
  const createdAt = Math.floor(Date.now() / 1000);
  const shell = responseShell(ctx, id, createdAt);
  if ((request as Partial<ParsedResponsesRequest>).nativeCompaction === true) {
    await sendCompaction(res, ctx, store, persist, id, shell);
    return;
  }

  const message =
    reply.text.length > 0
      ? { id: ctx.ids.hex('msg_', 48), type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: reply.text }], role: 'assistant' }
      : undefined;
  const calls = reply.toolCalls.map((c) => ({
    id: ctx.ids.hex('fc_', 48),
    type: 'function_call',
    status: 'completed',
    arguments: c.args,
    call_id: ctx.ids.alnum('call_', 24),
    name: c.name,
  }));
  const output: Record<string, unknown>[] = [...(message ? [message] : []), ...calls];

  const incomplete = reply.finishReason === 'length' ? 'max_output_tokens' : reply.finishReason === 'content-filter' ? 'content_filter' : undefined;
  const usage = usageOf(ctx);
  const final = {
    ...shell,
    status: incomplete ? 'incomplete' : 'completed',
    incomplete_details: incomplete ? { reason: incomplete } : null,
    output,
    usage,
  };

  if (persist) {
    const outputMessages: Message[] = [];
    if (message) {
      const m: Message = { role: 'assistant', parts: [{ type: 'text', text: reply.text }] };
      store.items.set(message.id, m);
      outputMessages.push(m);
    }
    for (const call of calls) {
      const m: Message = { role: 'assistant', parts: [{ type: 'tool-call', id: call.call_id, name: call.name, args: call.arguments }] };
      store.items.set(call.id, m);
      outputMessages.push(m);
    }
    store.responses.set(id, [...request.messages, ...outputMessages]);
  }

  if (!request.stream) {
    sendJson(res, 200, final);
    return;
  }

  const sse = new SseWriter(res, ctx, true);
  let seq = 0;
  const send = (event: Record<string, unknown>) => sse.send({ type: event.type, sequence_number: seq++, ...event }, String(event.type));
  await send({ type: 'response.created', response: shell });
  await send({ type: 'response.in_progress', response: shell });
  let outputIndex = 0;
  if (message) {
    const index = outputIndex++;
    await send({ type: 'response.output_item.added', output_index: index, item: { id: message.id, type: 'message', status: 'in_progress', content: [], role: 'assistant' } });
    await send({ type: 'response.content_part.added', item_id: message.id, output_index: index, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
    for (const piece of splitDeltas(reply.text)) {
      await send({ type: 'response.output_text.delta', item_id: message.id, output_index: index, content_index: 0, delta: piece, logprobs: [] });
    }
    await send({ type: 'response.output_text.done', item_id: message.id, output_index: index, content_index: 0, text: reply.text, logprobs: [] });
    await send({ type: 'response.content_part.done', item_id: message.id, output_index: index, content_index: 0, part: message.content[0] });
    await send({ type: 'response.output_item.done', output_index: index, item: message });
  }
  for (const call of calls) {
    const index = outputIndex++;
    await send({ type: 'response.output_item.added', output_index: index, item: { ...call, status: 'in_progress', arguments: '' } });
    for (const piece of argDeltas(call.arguments)) {
      await send({ type: 'response.function_call_arguments.delta', item_id: call.id, output_index: index, delta: piece });
    }
    await send({ type: 'response.function_call_arguments.done', item_id: call.id, output_index: index, arguments: call.arguments });
    await send({ type: 'response.output_item.done', output_index: index, item: call });
  }
  await send({ type: incomplete ? 'response.incomplete' : 'response.completed', response: final });
  sse.end();
}

/**
 * A compaction request's answer: one `compaction` output item whose encrypted content encodes the
 * summary (the reply text) and the user texts it covered. With `store: true` the item is kept for
 * `item_reference`, and the response (as the compacted conversation) for `previous_response_id`.
 */
async function sendCompaction(
  res: ReplySink,
  ctx: ReplyContext,
  store: ResponsesStore,
  persist: boolean,
  id: string,
  shell: ReturnType<typeof responseShell>,
): Promise<void> {
  const { request } = ctx;
  const payload: CompactionPayload = { summary: ctx.reply.text, users: userDigests(request.messages) };
  const itemId = ctx.ids.hex('cmp_', 48);
  const item = { id: itemId, type: 'compaction', encrypted_content: encryptCompaction(itemId, payload) };
  const final = { ...shell, status: 'completed', output: [item], usage: usageOf(ctx) };
  if (persist) {
    store.compactions.set(itemId, item.encrypted_content);
    const compacted = [...request.messages];
    compactInto(compacted, payload);
    store.responses.set(id, compacted);
  }
  if (!request.stream) {
    sendJson(res, 200, final);
    return;
  }
  const sse = new SseWriter(res, ctx, true);
  let seq = 0;
  const send = (event: Record<string, unknown>) => sse.send({ type: event.type, sequence_number: seq++, ...event }, String(event.type));
  await send({ type: 'response.created', response: shell });
  await send({ type: 'response.in_progress', response: shell });
  await send({ type: 'response.output_item.added', output_index: 0, item });
  await send({ type: 'response.output_item.done', output_index: 0, item });
  await send({ type: 'response.completed', response: final });
  sse.end();
}
