// OpenAI Chat Completions: POST /v1/chat/completions (JSON, or SSE with `stream: true`).
import { isRecord, jsonString, RequestError, str, type Message, type ParsedRequest, type Part, type ToolChoice, type ToolDefinition } from './conversation';
import { argDeltas, SseWriter, sendJson, type RenderedReply, type ReplyContext, type ReplySink } from './http';
import { splitDeltas } from './tokens';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

function contentParts(content: unknown, where: string): Part[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw new RequestError(400, `Invalid type for '${where}': expected one of a string or array of objects, but got ${typeof content} instead.`, where, 'invalid_type');
  const parts: Part[] = [];
  content.forEach((item, i) => {
    if (!isRecord(item)) throw new RequestError(400, `Invalid type for '${where}[${i}]': expected an object.`, `${where}[${i}]`, 'invalid_type');
    switch (item.type) {
      case 'text':
        parts.push({ type: 'text', text: str(item.text) });
        break;
      case 'refusal':
        parts.push({ type: 'text', text: str(item.refusal) });
        break;
      case 'image_url':
        parts.push({ type: 'image' });
        break;
      case 'input_audio':
      case 'file':
        parts.push({ type: 'file', name: isRecord(item.file) ? str(item.file.filename) : undefined });
        break;
      default:
        throw new RequestError(400, `Invalid value: '${String(item.type)}'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', and 'file'.`, `${where}[${i}].type`, 'invalid_value');
    }
  });
  return parts;
}

/**
 * As the real API: an assistant message with `tool_calls` must be followed by tool messages
 * answering each of its call ids (an unanswered call is refused, the id named).
 */
function answeredCalls(messages: unknown[]): void {
  messages.forEach((raw, i) => {
    if (!isRecord(raw) || raw.role !== 'assistant' || !Array.isArray(raw.tool_calls) || raw.tool_calls.length === 0) return;
    const answered = new Set<string>();
    for (const next of messages.slice(i + 1)) {
      if (!isRecord(next) || next.role !== 'tool') break;
      if (typeof next.tool_call_id === 'string') answered.add(next.tool_call_id);
    }
    const missing = raw.tool_calls.filter(isRecord).map((call) => str(call.id)).filter((id) => !answered.has(id));
    if (missing.length > 0) {
      throw new RequestError(
        400,
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
        `messages.[${i}].role`,
      );
    }
  });
}

export function parseChatRequest(body: Record<string, unknown>): ParsedRequest {
  if (typeof body.model !== 'string' || body.model.length === 0) throw new RequestError(400, 'you must provide a model parameter', 'model');
  if (!Array.isArray(body.messages)) throw new RequestError(400, "Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (body.messages.length === 0) throw new RequestError(400, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');

  const messages: Message[] = body.messages.map((raw, i): Message => {
    const where = `messages[${i}]`;
    if (!isRecord(raw)) throw new RequestError(400, `Invalid type for '${where}': expected an object, but got ${typeof raw} instead.`, where, 'invalid_type');
    const role = raw.role;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw new RequestError(400, `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`, `${where}.role`, 'invalid_value');
    }
    switch (role) {
      case 'system':
      case 'developer':
        return { role: 'system', parts: contentParts(raw.content, `${where}.content`) };
      case 'user':
        return { role: 'user', parts: contentParts(raw.content, `${where}.content`) };
      case 'assistant': {
        const parts = contentParts(raw.content, `${where}.content`);
        if (Array.isArray(raw.tool_calls)) {
          for (const call of raw.tool_calls) {
            if (!isRecord(call) || !isRecord(call.function)) continue;
            parts.push({ type: 'tool-call', id: str(call.id), name: str(call.function.name), args: jsonString(call.function.arguments) });
          }
        }
        return { role: 'assistant', parts };
      }
      default: {
        // tool (and legacy function) results
        const text = contentParts(raw.content, `${where}.content`)
          .map((p) => (p.type === 'text' ? p.text : ''))
          .join('');
        if (role === 'tool' && typeof raw.tool_call_id !== 'string') {
          throw new RequestError(400, `Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.`, `${where}.tool_call_id`, 'missing_required_parameter');
        }
        return { role: 'tool', parts: [{ type: 'tool-result', id: str(raw.tool_call_id ?? raw.name), text }] };
      }
    }
  });

  answeredCalls(body.messages as unknown[]);

  const tools: ToolDefinition[] = [];
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      if (!isRecord(tool) || !isRecord(tool.function)) continue;
      tools.push({ name: str(tool.function.name), description: str(tool.function.description), schema: tool.function.parameters });
    }
  }

  let toolChoice: ToolChoice = 'auto';
  const tc = body.tool_choice;
  if (tc === 'none' || tc === 'required' || tc === 'auto') toolChoice = tc;
  else if (isRecord(tc) && isRecord(tc.function) && typeof tc.function.name === 'string') toolChoice = { name: tc.function.name };

  const max = body.max_completion_tokens ?? body.max_tokens;
  return {
    model: body.model,
    stream: body.stream === true,
    messages,
    tools,
    toolChoice,
    maxOutputTokens: typeof max === 'number' ? max : undefined,
  };
}

function finishReason(reply: RenderedReply): string {
  switch (reply.finishReason) {
    case 'tool-calls':
      return 'tool_calls';
    case 'length':
      return 'length';
    case 'content-filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

function usageBody(ctx: ReplyContext) {
  return {
    prompt_tokens: ctx.usage.input,
    completion_tokens: ctx.usage.output,
    total_tokens: ctx.usage.input + ctx.usage.output,
    prompt_tokens_details: { cached_tokens: ctx.usage.cacheRead, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

export async function sendChat(res: ReplySink, ctx: ReplyContext): Promise<void> {
  const { reply, request } = ctx;
  const id = ctx.ids.alnum('chatcmpl-', 29);
  const created = Math.floor(Date.now() / 1000);
  const fingerprint = 'fp_' + ctx.ids.hex('', 10);
  const calls = reply.toolCalls.map((c) => ({ id: ctx.ids.alnum('call_', 24), type: 'function' as const, function: { name: c.name, arguments: c.args } }));

  if (!request.stream) {
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: request.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: reply.text.length > 0 ? reply.text : null,
            refusal: null,
            ...(calls.length > 0 ? { tool_calls: calls } : {}),
            annotations: [],
          },
          logprobs: null,
          finish_reason: finishReason(reply),
        },
      ],
      usage: usageBody(ctx),
      service_tier: 'default',
      system_fingerprint: fingerprint,
    });
    return;
  }

  const includeUsage = isRecord(ctx.body.stream_options) && ctx.body.stream_options.include_usage === true;
  const sse = new SseWriter(res, ctx, false);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: request.model,
    service_tier: 'default',
    system_fingerprint: fingerprint,
    choices,
    ...(includeUsage ? { usage: null } : {}),
    ...extra,
  });
  const delta = (d: Record<string, unknown>, finish: string | null = null) => ({ index: 0, delta: d, logprobs: null, finish_reason: finish });

  await sse.send(chunk([delta({ role: 'assistant', content: reply.text.length > 0 ? '' : null, refusal: null })]));
  for (const piece of splitDeltas(reply.text)) await sse.send(chunk([delta({ content: piece })]));
  for (const [index, call] of calls.entries()) {
    await sse.send(chunk([delta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] })]));
    for (const piece of argDeltas(call.function.arguments)) {
      await sse.send(chunk([delta({ tool_calls: [{ index, function: { arguments: piece } }] })]));
    }
  }
  await sse.send(chunk([delta({}, finishReason(reply))]));
  if (includeUsage) await sse.send(chunk([], { usage: usageBody(ctx) }));
  await sse.send('[DONE]');
  sse.end();
}
