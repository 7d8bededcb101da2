import { DOCUMENT_TOKENS, IMAGE_TOKENS } from '../tunables';
import type { Part } from './types';

export function isImage(mediaType: unknown): boolean {
  return typeof mediaType === 'string' && (mediaType === 'image' || mediaType.startsWith('image/'));
}

/** What a file counts for: an image 1,500 tokens, a PDF or any other document 2,000. */
export function fileTokens(mediaType: unknown): number {
  return isImage(mediaType) ? IMAGE_TOKENS : DOCUMENT_TOKENS;
}

/** The inline text of an AI SDK 7 text-tagged file (`data: { type: 'text', text }`), if it is one. */
export function inlineFileText(data: unknown): string | undefined {
  if (typeof data === 'object' && data !== null && (data as { type?: unknown }).type === 'text') {
    const text = (data as { text?: unknown }).text;
    if (typeof text === 'string') return text;
  }
  return undefined;
}

/** `[Attached image/png: name]`: how a file appears in a record or transcript (never its bytes). */
export function attachmentLine(mediaType: unknown, filename: unknown): string {
  const type = typeof mediaType === 'string' && mediaType !== '' ? mediaType : 'file';
  return typeof filename === 'string' && filename !== '' ? `[Attached ${type}: ${filename}]` : `[Attached ${type}]`;
}

/** A tool result's output as text, the way a record or transcript shows it. */
export interface ToolOutputText {
  text: string;
  error: boolean;
}

export function toolOutputText(output: unknown): ToolOutputText {
  if (typeof output !== 'object' || output === null) return { text: '', error: false };
  const { type, value, reason } = output as { type?: unknown; value?: unknown; reason?: unknown };
  switch (type) {
    case 'text':
      return { text: String(value ?? ''), error: false };
    case 'json':
      return { text: stringifyJson(value), error: false };
    case 'error-text':
      return { text: String(value ?? ''), error: true };
    case 'error-json':
      return { text: stringifyJson(value), error: true };
    case 'execution-denied':
      return { text: typeof reason === 'string' && reason !== '' ? `Execution denied: ${reason}` : 'Execution denied', error: true };
    case 'content':
      return { text: Array.isArray(value) ? value.map(contentItemText).filter(Boolean).join('\n') : '', error: false };
    default:
      return { text: '', error: false };
  }
}

function contentItemText(item: unknown): string {
  if (typeof item !== 'object' || item === null) return '';
  const part = item as Part;
  switch (part.type) {
    case 'text':
      return String(part.text ?? '');
    case 'file':
    case 'file-data':
    case 'file-url':
    case 'file-id':
      return attachmentLine(part.mediaType ?? 'file', part.filename);
    case 'image-data':
    case 'image-url':
    case 'image-file-id':
      return attachmentLine(part.mediaType ?? 'image', part.filename);
    default:
      return '';
  }
}

/** Tokens of files inside a tool result's `content` output. */
export function toolOutputFileTokens(output: unknown): number {
  if (typeof output !== 'object' || output === null) return 0;
  const { type, value } = output as { type?: unknown; value?: unknown };
  if (type !== 'content' || !Array.isArray(value)) return 0;
  let tokens = 0;
  for (const item of value as Part[]) {
    if (item.type.startsWith('image')) tokens += IMAGE_TOKENS;
    else if (item.type === 'file' || item.type.startsWith('file-')) tokens += fileTokens(item.mediaType);
  }
  return tokens;
}

export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}
