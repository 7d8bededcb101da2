// `npm run provider-server`: the local provider server on its own, its options checked, one line
// per request, and the command itself (spawned) serving the real OpenAI client until SIGTERM.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { providerServerOptions, requestLine, runProviderServer } from '../support/provider-server/cli';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('npm run provider-server', () => {
  it('reads its options, and names a bad one', () => {
    const defaults = providerServerOptions([]);
    expect({ ...defaults, agent: undefined }).toEqual({ agentName: 'assistant', agent: undefined, port: 4010, host: '127.0.0.1', contextWindow: 8_000, seed: 1, speed: { promptTokensPerSecond: 20_000, outputTokensPerSecond: 60 } });
    expect(providerServerOptions(['--speed', '0', '--context-window', '32_000', '--agent', 'coding'])).toMatchObject({ agentName: 'coding', contextWindow: 32_000 });
    expect(providerServerOptions(['--speed', '0'])).not.toHaveProperty('speed');
    expect(() => providerServerOptions(['--agent', 'gpt'])).toThrow('--agent must be one of assistant, coding, fixer, got "gpt"');
    expect(() => providerServerOptions(['--context-window', '8k'])).toThrow('--context-window must be a whole number of at least 1000, got "8k"');
    expect(() => providerServerOptions(['--port=-1'])).toThrow('--port must be a whole number of at least 0, got "-1"');
    expect(() => providerServerOptions(['--window', '8000'])).toThrow(/Unknown option '--window'/);
  });

  it('serves the chat assistant and prints a line per request', async () => {
    const lines: string[] = [];
    const server = await runProviderServer(['--port', '0', '--speed', '0', '--context-window', '2000'], (line) => lines.push(line));
    try {
      expect(lines).toEqual([
        'Local provider server: the chat assistant, a context window of 2,000 tokens.',
        `  OpenAI:    OPENAI_BASE_URL=${server.openaiBaseURL}  (any OPENAI_API_KEY)`,
        `  Anthropic: ANTHROPIC_BASE_URL=${server.anthropicBaseURL}  (any ANTHROPIC_API_KEY)`,
      ]);
      const model = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'any' }).chat('gpt-4o-mini');
      const { text } = await generateText({ model, prompt: 'My order number is A-4471.' });
      expect(text).toBe('Noted — your order number is **A-4471**.');
      const request = server.requests.at(-1)!;
      expect(lines.at(-1)).toBe(`POST /v1/chat/completions gpt-4o-mini: ${request.promptTokens} → ${request.outputTokens} tokens`);
      const stream = streamText({ model, prompt: Array.from({ length: 3_000 }, (_, i) => i).join(' ') });
      await stream.consumeStream();
      expect(lines.at(-1)).toMatch(/^POST \/v1\/chat\/completions gpt-4o-mini \(stream\): rejected \(context_length_exceeded, 400\)$/);
      expect(requestLine({ ...request, isSummaryRequest: true })).toBe(`POST /v1/chat/completions gpt-4o-mini: ${request.promptTokens} → ${request.outputTokens} tokens, a summary request`);
    } finally {
      await server.close();
    }
  });

  it('runs as a command until it is stopped', async () => {
    const child = spawn('npm', ['run', '--silent', 'provider-server', '--', '--port', '0', '--speed', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? `exit ${code}`)));
    try {
      await expect.poll(() => output, { timeout: 30_000, interval: 200 }).toContain('Ctrl+C stops it.');
      const baseURL = /OPENAI_BASE_URL=(\S+)/.exec(output)![1]!;
      const { text } = await generateText({ model: createOpenAI({ baseURL, apiKey: 'any' }).chat('gpt-4o-mini'), prompt: 'What was the order number I gave you?' });
      expect(text).toMatch(/^I don't have the order number — /);
      await expect.poll(() => output).toContain('POST /v1/chat/completions gpt-4o-mini: ');
      process.kill(-child.pid!, 'SIGTERM');
      expect(['exit 0', 'SIGTERM']).toContain(await exited);
      await expect(fetch(`${baseURL}/chat/completions`, { method: 'POST', body: '{}' })).rejects.toThrow();
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }, 60_000);
});
