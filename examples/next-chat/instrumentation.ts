// Tracing, off unless an OpenTelemetry exporter is configured: set OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), e.g. `http://localhost:4318` for a local collector or Jaeger,
// and `@vercel/otel` exports Next.js's spans and the `fetch` calls, on the Node.js and Edge runtimes.
// Each compaction then shows as a span `ai-compaction.compact` under the request that made it, its
// summary request a `chat <model>` span under it with the tokens it took (never the text). With the
// AI SDK's own telemetry on (`experimental_telemetry: { isEnabled: true }` in a route), it sits
// under the AI SDK's step span instead.
export async function register(): Promise<void> {
  if (!process.env.OTEL_EXPORTER_OTLP_ENDPOINT && !process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return;
  const { registerOTel } = await import('@vercel/otel');
  registerOTel({ serviceName: process.env.OTEL_SERVICE_NAME ?? 'next-chat' });
}
