// The chat assistant of the local provider server (the model of `npm run example`) and the chat
// session a benchmark can drive it with: its reading rules and replies on exact inputs, its
// summaries, the session's facts and questions, the recall judge, and what it proves through the
// real middleware. It answers from its prompt's text alone: a fact a compaction kept (in the
// summary or the record) is answered, one it dropped is not, and the assistant says so.
import { readFileSync } from 'node:fs';
import { createOpenAI } from '@ai-sdk/openai';
import { type ModelMessage, generateText, wrapLanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compaction } from '../../src';
import { REMINDER_PROMPT, SUMMARY_PROMPT, TEMPLATE_HEADINGS, UPDATE_PROMPT } from '../../src/checkpoint/prompts';
import {
  amnesiacChatSummary,
  assistantAgent,
  assistantReply,
  chatReply,
  chatSession,
  chatSummary,
  countText,
  factNamedIn,
  judgeRecall,
  type Message,
  type ProviderServer,
  readChatFacts,
  startProviderServer,
} from '../support/provider-server';

const system = (text: string): Message => ({ role: 'system', parts: [{ type: 'text', text }] });
const user = (text: string): Message => ({ role: 'user', parts: [{ type: 'text', text }] });
const said = (text: string): Message => ({ role: 'assistant', parts: [{ type: 'text', text }] });
const SYSTEM = system('You are a helpful assistant. Answer briefly.');

/** The facts of a text as `{ key: value }`. */
const values = (text: string) => Object.fromEntries([...readChatFacts(text)].map(([key, fact]) => [key, fact.value]));
const reply = (...messages: Message[]) => assistantReply([SYSTEM, ...messages]).text!;

const INVOICE = [
  'Here is the invoice from the print shop, keep the values in it:',
  '',
  'INVOICE',
  '0001  Flyers A5  x120  €54.10',
  'Invoice number: INV-2291',
  '0002  Posters A2  x12  €88.00',
  'Invoice total: €1,240.50',
  '- Invoice due date: 2025-04-30',
  '',
  'Please keep this document with the others.',
].join('\n');

describe('the chat assistant reads facts', () => {
  it('from a sentence `my <name> is <value>`, the value up to the first lower-case word after it', () => {
    expect(values('My order number is A-4471.')).toEqual({ 'order number': 'A-4471' });
    expect(values("By the way, my manager's name is Priya Raman and I live in Lyon.")).toEqual({ "manager's name": 'Priya Raman' });
    expect(values('Keep this in mind — my trip budget is €2,500, more or less.')).toEqual({ 'trip budget': '€2,500' });
    expect(values('My hotel is the Grand Palace.')).toEqual({ hotel: 'the Grand Palace' });
    expect(values('Note that my email address is ada.1f2e@example.com.')).toEqual({ 'email address': 'ada.1f2e@example.com' });
    expect(values('Our flight number is LH 1234; yours?')).toEqual({ 'flight number': 'LH 1234' });
  });

  it('from a line `<Name>: <value>`, with or without a list mark, not from rows or prose', () => {
    expect(values(INVOICE)).toEqual({ 'invoice number': 'INV-2291', 'invoice total': '€1,240.50', 'invoice due date': '2025-04-30' });
    expect(values('- **Order number**: A-4471\n* Seat row: H25')).toEqual({ 'order number': 'A-4471', 'seat row': 'H25' });
  });

  it('the newest mention of a name winning, a correction included', () => {
    const text = 'My order number is A-4471.\n\nNoted — your order number is **A-4471**.\n\nSorry, I got that wrong — my order number is actually A-4480.';
    const facts = readChatFacts(text);
    expect(facts.get('order number')).toEqual({ name: 'order number', value: 'A-4480', at: text.lastIndexOf('my order number') });
  });

  it('nothing from questions, placeholders, logs or its own replies that state no fact', () => {
    for (const text of [
      'What is my order number?',
      'What was the order number I gave you?',
      'Tell me a fact (“My order number is …”) and I will note it.',
      "Here's a log excerpt, just for context, nothing to keep from it:\n\n2025-03-01T10:00:12Z worker queue retry GET /api/orders id=4411",
      "I don't have the booking reference — it isn't in what I can still see of our conversation. If you gave it to me earlier, I no longer have it. Could you tell me again?",
      'Thanks, I\'ve read it (12 lines). I noted these values:',
    ]) {
      expect(values(text), text).toEqual({});
    }
  });
});

describe('the chat assistant replies', () => {
  it('notes a fact it is given', () => {
    expect(reply(user('My order number is A-4471.'))).toBe('Noted — your order number is **A-4471**.');
  });

  it('answers a question about a fact given earlier, from anywhere in its prompt', () => {
    const question = user('What was the order number I gave you?');
    expect(reply(user('My order number is A-4471.'), said('Noted — your order number is **A-4471**.'), question)).toBe('The order number you gave me is **A-4471**.');
    // the same fact in the system prompt, in an assistant message, inside any wrapper
    expect(assistantReply([system('Context: my order number is A-4471.'), question]).text).toBe('The order number you gave me is **A-4471**.');
    expect(reply(said('Earlier you said: my order number is A-4471.'), question)).toBe('The order number you gave me is **A-4471**.');
    expect(reply(user('<notes>\nsomething earlier\nOrder number: A-4471\n</notes>'), question)).toBe('The order number you gave me is **A-4471**.');
  });

  it('names the fact a question asks for by the longest name it has', () => {
    const facts = readChatFacts('My seat number is 14C.\nSeat row: H25\nProject budget: €90,000\nMy trip budget is €4,000.');
    expect(factNamedIn("What's my seat number?", facts)).toBe('seat number');
    expect(factNamedIn('What was the seat row in the event ticket I pasted?', facts)).toBe('seat row');
    expect(factNamedIn('What was the project budget in the project brief I pasted?', facts)).toBe('project budget');
    expect(factNamedIn('What is the budget?', facts)).toBeUndefined();
  });

  it('says plainly when it does not have the fact asked for', () => {
    expect(reply(user('What was the booking reference I gave you?'))).toBe(
      "I don't have the booking reference — it isn't in what I can still see of our conversation. If you gave it to me earlier, I no longer have it. Could you tell me again?",
    );
    expect(reply(user('My order number is A-4471.'), user('Do you still have my flight number?'))).toMatch(/^I don't have the flight number — /);
  });

  it('lists the values of a pasted document', () => {
    expect(reply(user(INVOICE))).toBe(
      "Thanks, I've read it (8 lines). I noted these values:\n\n- **Invoice number**: INV-2291\n- **Invoice total**: €1,240.50\n- **Invoice due date**: 2025-04-30",
    );
  });

  it('answers the questions of a message first, then notes its facts', () => {
    expect(reply(user('My order number is A-4471.'), user('My seat number is 14C. What was my order number?'))).toBe(
      'The order number you gave me is **A-4471**.\n\nNoted — your seat number is **14C**.',
    );
  });

  it('says what it read of a long text with nothing to note', () => {
    const log = ["Here's a log excerpt, just for context:", ...Array.from({ length: 12 }, (_, i) => `2025-03-01T10:00:${String(i).padStart(2, '0')}Z worker queue retry GET /api/orders id=${4400 + i}`)].join('\n');
    expect(reply(user(log))).toBe(
      [
        `I've read what you pasted (13 lines, ${log.length.toLocaleString('en-US')} characters). There is nothing in it for me to note:`,
        '',
        "- it starts with `Here's a log excerpt, just for context:`",
        '- it ends with `2025-03-01T10:00:11Z worker queue retry GET /api/orders id=…`',
        '',
        'Tell me a fact, or paste a document with values, one a line, and ask me about them later.',
      ].join('\n'),
    );
  });

  it('lists everything it still has when asked what it remembers', () => {
    expect(reply(user('My order number is A-4471.'), user(INVOICE), user('What do you remember?'))).toBe(
      [
        'Here is everything I still have from our conversation (4 facts):',
        '',
        '- **Order number**: A-4471',
        '- **Invoice number**: INV-2291',
        '- **Invoice total**: €1,240.50',
        '- **Invoice due date**: 2025-04-30',
      ].join('\n'),
    );
    expect(reply(user('What do you know?'))).toBe("I don't have any facts from our conversation: nothing in what I can still see of it tells me a value. Tell me one and ask me later.");
  });

  it('explains itself on a greeting, and says when nothing answers a question', () => {
    expect(reply(user('Hello'))).toMatch(/^I'm the local scripted assistant of this example \(no real model, no API key\)\./);
    expect(reply(user('Thanks!'))).toBe("You're welcome. Ask me about anything you told me earlier.");
    expect(reply(user("That's all for now, thanks."))).toBe("You're welcome. Ask me about anything you told me earlier.");
    expect(reply(user('Why is the sky blue?'))).toBe("I can only answer from what you've told me in this conversation, and nothing in it answers “Why is the sky blue?”. Tell me the facts and ask again.");
  });

  it('reads the facts of its own replies back as the same facts', () => {
    for (const text of [reply(user('My order number is A-4471.')), reply(user('My order number is A-4471.'), user('What is my order number?'))]) {
      if (text.startsWith('Noted')) expect(values(text)).toEqual({ 'order number': 'A-4471' });
      else expect(values(text)).toEqual({});
    }
    expect(values(reply(user(INVOICE)))).toEqual(values(INVOICE));
  });
});

describe('the chat assistant summarizes', () => {
  const conversation = [user('My order number is A-4471.'), said('Noted — your order number is **A-4471**.'), user(INVOICE), said(chatReply(INVOICE, readChatFacts(INVOICE)))];

  it('answers a summary request with the template, every fact it saw under Important Context', () => {
    for (const instruction of [SUMMARY_PROMPT, UPDATE_PROMPT, REMINDER_PROMPT]) {
      const text = reply(...conversation, user(instruction))!;
      expect(text.split('\n').filter((line) => line.startsWith('#'))).toEqual([...TEMPLATE_HEADINGS]);
      expect(text.split('## Important Context\n')[1]).toBe('- Order number: A-4471\n- Invoice number: INV-2291\n- Invoice total: €1,240.50\n- Invoice due date: 2025-04-30');
    }
  });

  it('answers from its summary alone, in whatever wrapper it comes', () => {
    const summary = reply(...conversation, user(SUMMARY_PROMPT))!;
    for (const wrapped of [summary, `<memo>\n${summary}\n</memo>`, `Summary of the earlier conversation:\n\n${summary}`]) {
      expect(reply(user(wrapped), user('What was the invoice total in the invoice I pasted?'))).toBe('The invoice total you gave me is **€1,240.50**.');
      expect(reply(said(wrapped), user("What's my order number?"))).toBe('The order number you gave me is **A-4471**.');
    }
  });

  it('an update keeps the newest value of a fact the newer history changed', () => {
    const summary = reply(...conversation, user(SUMMARY_PROMPT))!;
    const updated = reply(user(summary), user('Update — my order number is now A-4480.'), said('Noted — your order number is **A-4480**.'), user(UPDATE_PROMPT))!;
    expect(updated).toMatch(/^- Order number: A-4480$/m);
    expect(updated).not.toContain('A-4471');
  });

  it('leaves the summary instruction out of the facts', () => {
    const text = reply(user('Hello.'), user(`${SUMMARY_PROMPT}\n\nFor example: my order number is Z-9999.\nInvoice number: INV-0000`))!;
    expect(text).not.toContain('Z-9999');
    expect(text).not.toContain('INV-0000');
    expect(text).toContain('## Important Context\n- No facts given yet');
  });

  it('written the amnesiac way, answers a summary request with the template and no fact at all', () => {
    const amnesiac = assistantAgent({ summaries: 'amnesiac' });
    const messages = [SYSTEM, ...conversation, user(SUMMARY_PROMPT)];
    const text = amnesiac.respond!({ api: 'openai-chat', model: 'm', messages, tools: [], toolChoice: 'auto', maxOutputTokens: undefined, summary: 'first' })!.text!;
    expect(text).toBe(amnesiacChatSummary());
    expect(text.split('\n').filter((line) => line.startsWith('#'))).toEqual([...TEMPLATE_HEADINGS]);
    expect(text.split('## Important Context\n')[1]).toBe('- None');
    expect(values(text)).toEqual({});
    // the rest it answers as ever, from its prompt
    expect(amnesiac.respond!({ api: 'openai-chat', model: 'm', messages: [SYSTEM, ...conversation, user("What's my order number?")], tools: [], toolChoice: 'auto', maxOutputTokens: undefined, summary: undefined })!.text).toBe('The order number you gave me is **A-4471**.');
    expect(() => assistantAgent({ summaries: 'lossy' as never })).toThrow("assistantAgent: summaries must be 'honest' or 'amnesiac', got lossy");
  });

  it('keeps the newest facts within the output limit, and says how many it left out', () => {
    const letters = 'abcdefghij';
    const name = (i: number) => `Code ${letters[Math.floor(i / 10)]}${letters[i % 10]}`;
    const facts = readChatFacts(Array.from({ length: 80 }, (_, i) => `${name(i)}: C-${1000 + i}`).join('\n'));
    const whole = chatSummary(facts);
    expect(countText(whole)).toBeGreaterThan(600);
    const cut = chatSummary(facts, 400);
    expect(countText(cut)).toBeLessThanOrEqual(360);
    const kept = cut.split('## Important Context\n')[1]!.split('\n');
    expect(kept.at(-1)).toBe('- Code hj: C-1079');
    expect(kept[0]).toBe(`- ${name(80 - kept.length)}: C-${1080 - kept.length}`);
    expect(cut).toContain(`; ${80 - kept.length} older ones left out for length`);
    // the server passes the request's output limit on
    expect(countText(assistantAgent().respond!({ api: 'openai-chat', model: 'm', messages: [user([...facts.values()].map((f) => `${f.name}: ${f.value}`).join('\n')), user(SUMMARY_PROMPT)], tools: [], toolChoice: 'auto', maxOutputTokens: 400, summary: 'first' })!.text!)).toBeLessThanOrEqual(360);
  });
});

describe('the chat session', () => {
  const session = chatSession({ seed: 7 });

  it('is 120 user turns by default, the same for the same seed, another for another', () => {
    expect(session).toHaveLength(120);
    expect(chatSession({ seed: 7 })).toEqual(session);
    expect(chatSession({ seed: 8 }).map((turn) => turn.text)).not.toEqual(session.map((turn) => turn.text));
    const kinds = new Set(session.map((turn) => turn.kind));
    expect([...kinds].sort()).toEqual(['chat', 'document', 'fact', 'paste', 'question']);
    expect(session.filter((turn) => turn.kind === 'question').length).toBeGreaterThanOrEqual(30);
    expect(session.some((turn) => turn.kind === 'fact' && turn.correction)).toBe(true);
    for (const turn of session.filter((turn) => turn.kind === 'document' || turn.kind === 'paste')) {
      expect(turn.text.length).toBeGreaterThanOrEqual(1_500);
      expect(turn.text.length).toBeLessThanOrEqual(4_300);
    }
    expect(() => chatSession({ seed: 1, turns: 0 })).toThrow('chatSession: turns must be a positive whole number, got 0');
  });

  it('states each fact so that the assistant reads exactly it, and nothing from the other turns', () => {
    for (const turn of session) {
      const expected = turn.kind === 'fact' || turn.kind === 'document' ? Object.fromEntries(turn.facts.map((fact) => [fact.name.toLowerCase(), fact.value])) : {};
      expect(values(turn.text), turn.text.slice(0, 80)).toEqual(expected);
    }
  });

  it('asks about facts given at least two turns before, expecting the newest value, and names exactly that fact', () => {
    let text = '';
    const given = new Map<string, string[]>();
    session.forEach((turn, index) => {
      if (turn.kind === 'question') {
        const { key, expected, stale, givenAt } = turn.question;
        expect(given.get(key)?.at(-1)).toBe(expected);
        expect(given.get(key)!.slice(0, -1)).toEqual(stale);
        expect(givenAt).toBeLessThanOrEqual(index - 2);
        expect(factNamedIn(turn.text, readChatFacts(text))).toBe(key);
      }
      if (turn.kind === 'fact' || turn.kind === 'document') for (const fact of turn.facts) given.set(fact.name.toLowerCase(), [...(given.get(fact.name.toLowerCase()) ?? []), fact.value]);
      text += `\n\n${turn.text}`;
    });
    // no fact's name is part of another's: a question names one fact
    const keys = [...given.keys()];
    for (const a of keys) for (const b of keys) if (a !== b) expect(` ${b} `.includes(` ${a} `), `${a} in ${b}`).toBe(false);
  });
});

describe('judging a reply to a question', () => {
  const question = { expected: 'A-4480', stale: ['A-4471'] };
  it('right, stale, forgotten or wrong', () => {
    expect(judgeRecall('The order number you gave me is **A-4480**.', question)).toBe('right');
    expect(judgeRecall('It was a-4480, I think', question)).toBe('right');
    expect(judgeRecall('The order number you gave me is **A-4471**.', question)).toBe('stale');
    expect(judgeRecall('It is A-44800.', question)).toBe('wrong');
    expect(judgeRecall("I don't have the order number — it isn't in what I can still see of our conversation.", question)).toBe('forgotten');
    expect(judgeRecall('I no longer remember it.', question)).toBe('forgotten');
    expect(judgeRecall('Your order number is B-1.', question)).toBe('wrong');
  });
});

describe('the chat assistant through the real middleware', () => {
  let server: ProviderServer;
  beforeAll(async () => {
    server = await startProviderServer({ contextWindow: 6_000, agent: assistantAgent() });
  });
  afterAll(() => server.close());

  /** A chat through `generateText` with the real OpenAI client; returns the replies to `questions`, asked at the end. */
  async function chat(turns: string[], questions: string[], options: { prepare?: false } = {}) {
    const model = wrapLanguageModel({
      model: createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' }).chat('gpt-4o-mini'),
      middleware: compaction({ contextWindow: 6_000, ...options }),
    });
    const messages: ModelMessage[] = [];
    const answers: string[] = [];
    for (const [index, text] of [...turns, ...questions].entries()) {
      messages.push({ role: 'user', content: text });
      const result = await generateText({ model, system: 'You are a helpful assistant. Answer briefly.', messages });
      messages.push({ role: 'assistant', content: result.text });
      if (index >= turns.length) answers.push(result.text);
    }
    return { answers, last: server.requests.filter((request) => !request.isSummaryRequest).at(-1)! };
  }
  const pastes = chatSession({ seed: 'pastes', turns: 200, pasteChars: [3_000, 4_000] })
    .filter((turn) => turn.kind === 'paste')
    .slice(0, 8)
    .map((turn) => turn.text);

  it('answers a fact from before a compaction from the checkpoint that stands for it', async () => {
    const mark = server.requests.length;
    const { answers, last } = await chat(['My order number is A-4471.', INVOICE, ...pastes], ['What was the order number I gave you?', 'What was the invoice total in the invoice I pasted?']);
    expect(server.requests.slice(mark).filter((request) => request.isSummaryRequest).length, 'summary requests').toBeGreaterThan(0);
    expect(answers).toEqual(['The order number you gave me is **A-4471**.', 'The invoice total you gave me is **€1,240.50**.']);
    // the last prompt no longer holds the messages that gave the facts: only the checkpoint does
    const body = last.body as { messages: Array<{ role: string; content: string }> };
    expect(body.messages.map((message) => message.content)).not.toContain('My order number is A-4471.');
    expect(body.messages.map((message) => message.content)).not.toContain(INVOICE);
    expect(JSON.stringify(body.messages)).toContain('A-4471');
  });

  it('answers a fact the user stated even when the summary keeps nothing: the checkpoint keeps the user\'s earlier messages', async () => {
    // a summarizer that keeps nothing: the middleware's own record keeps the newest messages, and
    // opens with the user's earlier ones (docs/design.md, "The user's words")
    const forgetful = await startProviderServer({
      contextWindow: 6_000,
      agent: { respond: (request) => (request.summary === undefined ? assistantReply(request.messages) : { text: TEMPLATE_HEADINGS.map((heading) => `${heading}\n- None`).join('\n\n') }) },
    });
    try {
      const model = wrapLanguageModel({ model: createOpenAI({ baseURL: forgetful.openaiBaseURL, apiKey: 'test' }).chat('gpt-4o-mini'), middleware: compaction({ contextWindow: 6_000, prepare: false }) });
      const messages: ModelMessage[] = [];
      let text = '';
      for (const content of ['My order number is A-4471.', ...pastes, 'What was the order number I gave you?']) {
        messages.push({ role: 'user', content });
        ({ text } = await generateText({ model, messages }));
        messages.push({ role: 'assistant', content: text });
      }
      expect(forgetful.requests.some((request) => request.isSummaryRequest)).toBe(true);
      expect(text).toBe('The order number you gave me is **A-4471**.');
      expect(judgeRecall(text, { expected: 'A-4471', stale: [] })).toBe('right');
    } finally {
      await forgetful.close();
    }
  });
});

describe('the chat assistant knows nothing of this middleware', () => {
  it('has no checkpoint tags, record labels or identifiers heading in its source', () => {
    for (const file of ['assistant.ts', 'chat-session.ts']) {
      const source = readFileSync(new URL(`../support/provider-server/${file}`, import.meta.url), 'utf8');
      for (const marker of ['conversation-checkpoint', 'recent-context', '<summary>', 'Tool calls in the current turn', '[Tool result]', '[Assistant', '[User]', 'earlier steps of this turn', 'Identifiers (kept verbatim)', 'historical context']) {
        expect(source, `${file}: ${marker}`).not.toContain(marker);
      }
    }
  });
});
