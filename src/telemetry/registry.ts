import type { Context, ContextManager, Span, Tracer, TracerProvider } from '@opentelemetry/api';

/**
 * The OpenTelemetry API as the application registered it (docs/observability.md). Every copy of
 * `@opentelemetry/api` 1.x keeps the tracer provider and the context manager it was given in one
 * global, so that the copies an app, the AI SDK and an exporter each load all trace to one place.
 * This package reads that global and imports nothing: an app without `@opentelemetry/api` bundles
 * and runs as before (no module to resolve for webpack, esbuild, Vite or an Edge runtime), and an
 * app with it gets spans wherever it registered a provider, its copy bundled or not.
 */

/** Where every copy of `@opentelemetry/api` 1.x keeps what was registered (`trace`, `context`, ...). */
const REGISTRY = Symbol.for('opentelemetry.js.api.1');
/** The key under which a context holds its span (what `trace.setSpan` and `trace.getSpan` use). */
const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');

interface Registry {
  trace?: TracerProvider;
  context?: ContextManager;
}

/** A tracer of the registered provider, and the contexts its spans go under. */
export interface Telemetry {
  tracer: Tracer;
  /** The active context: the span the middleware was called under (the AI SDK's step span, when its telemetry is on). */
  active: Context;
  /** Runs `fn` with `context` active, where a context manager is registered (so spans made inside nest under it). */
  within<T>(context: Context, fn: () => T): T;
}

/** The registered tracer provider's tracer for this package; `undefined` when none is registered (nothing is made then). */
export function telemetry(): Telemetry | undefined {
  const registry = (globalThis as { [REGISTRY]?: Registry })[REGISTRY];
  const provider = registry?.trace;
  if (typeof provider?.getTracer !== 'function') return undefined;
  const manager = registry?.context;
  return {
    tracer: provider.getTracer('ai-compaction'),
    active: manager?.active() ?? contextOf(new Map()),
    within: (context, fn) => (manager === undefined ? fn() : manager.with(context, fn)),
  };
}

/** `context` with `span` as its span: a span started under it is that span's child. */
export function withSpan(context: Context, span: Span): Context {
  return context.setValue(SPAN_KEY, span);
}

/** An immutable context of `values`, as the API's root context is: for when no context manager is registered. */
function contextOf(values: ReadonlyMap<symbol, unknown>): Context {
  return {
    getValue: (key) => values.get(key),
    setValue: (key, value) => contextOf(new Map(values).set(key, value)),
    deleteValue: (key) => {
      const next = new Map(values);
      next.delete(key);
      return contextOf(next);
    },
  };
}
