// Anthropic Messages: POST /v1/messages (JSON, or SSE with `stream: true`).
//
// Native compaction (compaction.ts): a request with `compaction: { type: 'summarize' }` (and the
// `compact-2026-09-04` beta in `anthropic-beta`) is answered with a single `compaction` content
// block; a `compaction` block in a later request's messages stands for everything before it.
import type { IncomingHttpHeaders } from 'node:http';
import { compactInto, finishCompaction, signCompaction, userDigests, verifyCompactionBlock, type CompactionMarker, type CompactionPayload } from './compaction';
import { isRecord, jsonString, RequestError, str, type Message, type ParsedRequest, type Part, type ToolChoice, type ToolDefinition } from './conversation';
import { argDeltas, SseWriter, sendJson, type RenderedReply, type ReplyContext, type ReplySink } from './http';
import { splitDeltas } from './tokens';

export interface ParsedAnthropicRequest extends ParsedRequest {
  /** Message indices whose blocks carry `cache_control`. */
  breakpoints: number[];
  /** `compaction: { type: 'summarize' }`: an on-demand compaction request. */
  nativeCompaction: boolean;
}

export const COMPACTION_BETA = 'compact-2026-09-04';

function blocks(content: unknown, where: string): { parts: Part[]; cached: boolean; compaction?: { payload: CompactionPayload; after: number } } {
  if (typeof content === 'string') return { parts: [{ type: 'text', text: content }], cached: false };
  if (!Array.isArray(content)) throw new RequestError(400, `${where}: Input should be a valid list`);
  const parts: Part[] = [];
  let cached = false;
  let compaction: { payload: CompactionPayload; after: number } | undefined;
  content.forEach((block, i) => {
    if (!isRecord(block)) throw new RequestError(400, `${where}.${i}: Input should be a valid dictionary or object to extract fields from`);
    if (block.cache_control != null) cached = true;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: str(block.text) });
        break;
      case 'image':
        parts.push({ type: 'image' });
        break;
      case 'document':
        parts.push({ type: 'file', name: str(block.title) || undefined });
        break;
      case 'thinking':
        parts.push({ type: 'reasoning', text: str(block.thinking) });
        break;
      case 'redacted_thinking':
        parts.push({ type: 'reasoning', text: str(block.data) });
        break;
      case 'compaction':
        // stands for everything before it: the blocks before it in this message go too
        compaction = { payload: verifyCompactionBlock(block.content, block.signature, `${where}.${i}`), after: parts.length };
        break;
      case 'tool_use':
        parts.push({ type: 'tool-call', id: str(block.id), name: str(block.name), args: jsonString(block.input ?? {}) });
        break;
      case 'tool_result': {
        let text = '';
        let images = 0;
        if (typeof block.content === 'string') text = block.content;
        else if (Array.isArray(block.content)) {
          for (const c of block.content) {
            if (isRecord(c) && c.type === 'text') text += str(c.text);
            else if (isRecord(c) && (c.type === 'image' || c.type === 'document')) images++;
            else text += jsonString(c);
          }
        }
        parts.push({ type: 'tool-result', id: str(block.tool_use_id), text, ...(block.is_error === true ? { isError: true } : {}), ...(images > 0 ? { images } : {}) });
        break;
      }
      default:
        if (typeof block.type !== 'string') throw new RequestError(400, `${where}.${i}.type: Field required`);
        // server tool uses/results ...: counted as their JSON
        parts.push({ type: 'text', text: jsonString(block) });
    }
  });
  return { parts, cached, ...(compaction ? { compaction } : {}) };
}

function betas(headers: IncomingHttpHeaders | undefined): string[] {
  const value = headers?.['anthropic-beta'];
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).split(',').map((b) => b.trim());
}

export function parseAnthropicRequest(body: Record<string, unknown>, headers?: IncomingHttpHeaders): ParsedAnthropicRequest {
  if (typeof body.model !== 'string' || body.model.length === 0) throw new RequestError(400, 'model: Field required');
  if (typeof body.max_tokens !== 'number') throw new RequestError(400, 'max_tokens: Field required');
  if (!Array.isArray(body.messages)) throw new RequestError(400, 'messages: Field required');

  let nativeCompaction = false;
  if (body.compaction !== undefined && body.compaction !== null) {
    if (!betas(headers).includes(COMPACTION_BETA)) throw new RequestError(400, 'compaction: Extra inputs are not permitted');
    const compaction = body.compaction;
    if (!isRecord(compaction) || compaction.type !== 'summarize') throw new RequestError(400, "compaction.type: Input should be 'summarize'");
    if (compaction.instructions !== undefined && typeof compaction.instructions !== 'string') throw new RequestError(400, 'compaction.instructions: Input should be a valid string');
    if (body.context_management !== undefined && body.context_management !== null) {
      throw new RequestError(400, 'compaction: cannot be used together with context_management');
    }
    nativeCompaction = true;
  }

  const messages: Message[] = [];
  const breakpoints: number[] = [];
  let marker: CompactionMarker | undefined;
  let headerCached = false;
  if (body.system !== undefined && body.system !== null && body.system !== '') {
    const { parts, cached } = blocks(body.system, 'system');
    if (cached) breakpoints.push(messages.length);
    messages.push({ role: 'system', parts });
  }
  body.messages.forEach((raw, i) => {
    const where = `messages.${i}`;
    if (!isRecord(raw)) throw new RequestError(400, `${where}: Input should be a valid dictionary or object to extract fields from`);
    if (raw.role !== 'user' && raw.role !== 'assistant') throw new RequestError(400, `${where}.role: Input should be 'user' or 'assistant'`);
    const { parts, cached, compaction } = blocks(raw.content, `${where}.content`);
    if (compaction) {
      // the system prompt stays; earlier messages and blocks are dropped (their breakpoints too)
      marker = compactInto(messages, compaction.payload);
      breakpoints.splice(0, breakpoints.length, ...breakpoints.filter((b) => messages[b]?.role === 'system'));
      const rest = parts.slice(compaction.after);
      if (rest.length === 0) return;
      if (cached) breakpoints.push(messages.length);
      messages.push({ role: raw.role, parts: rest, ...(cached ? { cacheBreakpoint: true } : {}) });
      return;
    }
    if (cached) breakpoints.push(messages.length);
    messages.push({ role: raw.role, parts, ...(cached ? { cacheBreakpoint: true } : {}) });
  });
  finishCompaction(messages, marker);
  if (!messages.some((m) => m.role !== 'system')) throw new RequestError(400, 'messages: at least one message is required');

  const tools: ToolDefinition[] = [];
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      if (!isRecord(tool)) continue;
      if (tool.cache_control != null) headerCached = true;
      tools.push({ name: str(tool.name), description: str(tool.description), schema: tool.input_schema });
    }
  }
  // a breakpoint on the tools caches tools (+ system, which precedes messages in our prefix chain)
  if (headerCached && messages[0]?.role === 'system' && !breakpoints.includes(0)) breakpoints.unshift(0);

  let toolChoice: ToolChoice = 'auto';
  const tc = body.tool_choice;
  if (isRecord(tc)) {
    if (tc.type === 'none') toolChoice = 'none';
    else if (tc.type === 'any') toolChoice = 'required';
    else if (tc.type === 'tool' && typeof tc.name === 'string') toolChoice = { name: tc.name };
  }

  return {
    model: body.model,
    stream: body.stream === true,
    messages,
    tools,
    toolChoice,
    maxOutputTokens: body.max_tokens,
    breakpoints: breakpoints.sort((a, b) => a - b),
    nativeCompaction,
  };
}

function stopReason(reply: RenderedReply): string {
  switch (reply.finishReason) {
    case 'tool-calls':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    case 'content-filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

export async function sendAnthropic(res: ReplySink, ctx: ReplyContext): Promise<void> {
  const { reply, request, usage } = ctx;
  const id = ctx.ids.alnum('msg_01', 22);
  const uncached = Math.max(0, usage.input - usage.cacheRead - usage.cacheWrite);
  const usageBody = {
    input_tokens: uncached,
    cache_creation_input_tokens: usage.cacheWrite,
    cache_read_input_tokens: usage.cacheRead,
    output_tokens: usage.output,
    service_tier: 'standard',
  };
  const compaction = (request as Partial<ParsedAnthropicRequest>).nativeCompaction === true;
  const calls = compaction ? [] : reply.toolCalls.map((c) => ({ id: ctx.ids.alnum('toolu_01', 22), name: c.name, args: c.args, input: safeParse(c.args) }));
  const signature = compaction ? signCompaction({ summary: reply.text, users: userDigests(request.messages) }) : '';
  const content: Record<string, unknown>[] = compaction
    ? [{ type: 'compaction', content: reply.text, signature }]
    : [
        ...(reply.text.length > 0 ? [{ type: 'text', text: reply.text }] : []),
        ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input })),
      ];
  const stop = compaction ? 'compaction' : stopReason(reply);

  if (!request.stream) {
    sendJson(res, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model: request.model,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: usageBody,
    });
    return;
  }

  const sse = new SseWriter(res, ctx, true);
  const send = (event: Record<string, unknown>) => sse.send(event, String(event.type));
  await send({
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: request.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usageBody, output_tokens: Math.min(1, usage.output) },
    },
  });
  await send({ type: 'ping' });
  let index = 0;
  if (compaction) {
    // like the API: the block opens empty (with its signature), the whole summary comes as one compaction_delta
    await send({ type: 'content_block_start', index, content_block: { type: 'compaction', content: null, signature } });
    await send({ type: 'content_block_delta', index, delta: { type: 'compaction_delta', content: reply.text } });
    await send({ type: 'content_block_stop', index });
    index++;
  } else if (reply.text.length > 0) {
    await send({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const piece of splitDeltas(reply.text)) await send({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
    await send({ type: 'content_block_stop', index });
    index++;
  }
  for (const call of calls) {
    await send({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } });
    for (const piece of argDeltas(call.args)) await send({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    await send({ type: 'content_block_stop', index });
    index++;
  }
  await send({
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { input_tokens: uncached, cache_creation_input_tokens: usage.cacheWrite, cache_read_input_tokens: usage.cacheRead, output_tokens: usage.output },
  });
  await send({ type: 'message_stop' });
  sse.end();
}

function safeParse(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}
