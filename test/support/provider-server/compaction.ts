// Provider-native compaction, shared by the OpenAI Responses and Anthropic wire formats.
//
// A compaction request (OpenAI: `input` ends with `{ type: 'compaction_trigger' }`; Anthropic:
// `compaction: { type: 'summarize' }` with the `compact-2026-09-04` beta) is answered with one
// compaction item instead of a reply. What the item stands for is the agent's own summary of the
// request (the filled summary template of agent.ts, so the agent can resume from it: it carries
// `Tool calls in the current turn: N`), plus digests of the user texts it covered:
//
// - OpenAI: `{ type: 'compaction', id: 'cmp_…', encrypted_content }`, where the "encrypted"
//   content is `gAAAAA` + base64url(JSON { v, id, summary, users, mac }). Opaque to the client; the
//   server decodes it when the item comes back (as itself with `store: false`, or as an
//   `item_reference` to its id with `store: true`) and refuses it when it was altered.
// - Anthropic: `{ type: 'compaction', content: <summary>, signature }`, where the signature is
//   base64(JSON { v, digest: sha256(content), users }); a block whose content no longer matches
//   its signature is refused.
//
// When an item comes back, everything before it (system messages and instructions aside) is
// dropped from what the server counts and from what the agent sees; the item itself is seen and
// counted as a checkpoint message holding its summary (`<conversation-checkpoint><summary>…`).
// User messages right after the item whose texts the item covered (the "retained" newest user
// messages a compacting client sends after it) are moved before that checkpoint message, so the
// agent keeps counting its turn through the compaction instead of starting the turn over.
import { createHash } from 'node:crypto';
import { summaryReply } from './agent';
import { isRecord, RequestError, type Message } from './conversation';

/** What a compaction item stands for. */
export interface CompactionPayload {
  summary: string;
  /** sha1 digests of the user texts the item covered. */
  users: string[];
}

/** Where, in a request's neutral messages, a compaction item stood and what it covered. */
export interface CompactionMarker {
  /** Index of the checkpoint message standing for the item. */
  index: number;
  users: string[];
}

const CHECKPOINT_OPEN = '<conversation-checkpoint>';
const SUMMARIZE = 'You MUST summarize the conversation above.';

const sha = (algorithm: 'sha1' | 'sha256', text: string) => createHash(algorithm).update(text).digest('hex');

function isCheckpointText(text: string): boolean {
  return text.trimStart().startsWith(CHECKPOINT_OPEN);
}

/** The summary a compaction request gets: the agent's filled template of the whole request. */
export function compactionSummary(seed: number, messages: Message[]): string {
  return summaryReply(seed, [...messages, { role: 'user', parts: [{ type: 'text', text: SUMMARIZE }] }]);
}

/** Digests of every user text of the request (checkpoint messages aside). */
export function userDigests(messages: Message[]): string[] {
  const out = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'user') continue;
    for (const part of message.parts) if (part.type === 'text' && !isCheckpointText(part.text)) out.add(sha('sha1', part.text));
  }
  return [...out];
}

/** The message the agent sees (and the server counts) for a compaction item. */
export function checkpointOf(summary: string): Message {
  return { role: 'user', parts: [{ type: 'text', text: `${CHECKPOINT_OPEN}\n<summary>\n${summary}\n</summary>\n</conversation-checkpoint>` }] };
}

/** Drops everything before a compaction item (system messages aside) and puts its checkpoint message in. */
export function compactInto(messages: Message[], payload: CompactionPayload): CompactionMarker {
  const kept = messages.filter((m) => m.role === 'system');
  messages.length = 0;
  messages.push(...kept, checkpointOf(payload.summary));
  return { index: messages.length - 1, users: payload.users };
}

/** Moves the retained user messages right after the item before its checkpoint message. */
export function finishCompaction(messages: Message[], marker: CompactionMarker | undefined): void {
  if (marker === undefined) return;
  const users = new Set(marker.users);
  let end = marker.index + 1;
  while (end < messages.length) {
    const m = messages[end]!;
    const texts = m.parts.filter((p) => p.type === 'text');
    if (m.role !== 'user' || texts.length === 0 || texts.length !== m.parts.length || !texts.every((p) => users.has(sha('sha1', p.text)))) break;
    end++;
  }
  if (end === marker.index + 1) return;
  const retained = messages.splice(marker.index + 1, end - marker.index - 1);
  messages.splice(marker.index, 0, ...retained);
}

// ---------------------------------------------------------------------------------------------
// OpenAI: the encrypted content

const ENCRYPTED_PREFIX = 'gAAAAA';

/** A stand-in for the provider's authentication of its own items: any change to the payload shows. */
function mac(id: string, payload: CompactionPayload): string {
  return sha('sha256', JSON.stringify(['provider-server', id, payload.summary, payload.users])).slice(0, 32);
}

export function encryptCompaction(id: string, payload: CompactionPayload): string {
  const json = JSON.stringify({ v: 1, id, summary: payload.summary, users: payload.users, mac: mac(id, payload) });
  return ENCRYPTED_PREFIX + Buffer.from(json, 'utf8').toString('base64url');
}

/** The payload of a `compaction` input item; a 400 when it was altered or not made by this server for this id. */
export function decryptCompaction(id: unknown, encrypted: unknown, where: string): CompactionPayload {
  const invalid = () =>
    new RequestError(400, `The encrypted content for item ${typeof id === 'string' ? id : '(no id)'} could not be verified.`, `${where}.encrypted_content`, 'invalid_encrypted_content');
  if (typeof encrypted !== 'string' || !encrypted.startsWith(ENCRYPTED_PREFIX)) throw invalid();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(encrypted.slice(ENCRYPTED_PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!isPayload(value) || value.v !== 1 || (id !== undefined && value.id !== id)) throw invalid();
  const payload = { summary: value.summary, users: value.users };
  // byte for byte what this server issued (a trailing or changed character shows)
  if (encryptCompaction(value.id, payload) !== encrypted) throw invalid();
  return payload;
}

// ---------------------------------------------------------------------------------------------
// Anthropic: the signature

export function signCompaction(payload: CompactionPayload): string {
  return Buffer.from(JSON.stringify({ v: 1, digest: sha('sha256', payload.summary), users: payload.users }), 'utf8').toString('base64');
}

/** The payload of a replayed compaction block; a 400 when its content no longer matches its signature. */
export function verifyCompactionBlock(content: unknown, signature: unknown, where: string): CompactionPayload {
  if (typeof content !== 'string' || content.length === 0) throw new RequestError(400, `${where}.content: Field required`);
  if (signature === undefined || signature === null) return { summary: content, users: [] };
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(String(signature), 'base64').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!isRecord(value) || value.digest !== sha('sha256', content) || !Array.isArray(value.users)) {
    throw new RequestError(400, `${where}: Invalid \`signature\` in \`compaction\` block`);
  }
  return { summary: content, users: value.users.filter((u): u is string => typeof u === 'string') };
}

function isPayload(value: unknown): value is { v: number; id: string; summary: string; users: string[] } {
  return isRecord(value) && typeof value.summary === 'string' && Array.isArray(value.users) && value.users.every((u) => typeof u === 'string');
}
