// A local OTLP/HTTP trace receiver: POST /v1/traces with a JSON body (what @opentelemetry/exporter-trace-otlp-http
// sends), decoded into flat spans. Listens on port 0.
import { createServer, type Server } from "node:http";
import { gunzipSync } from "node:zlib";

export type ReceivedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  service: string | undefined;
  attributes: Record<string, string | number | boolean>;
  startNs: bigint;
  endNs: bigint;
};

export type OtlpReceiver = {
  /** The endpoint to give as OTEL_EXPORTER_OTLP_ENDPOINT (spans are posted to `<url>/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received (each a batch of spans). */
  requests: number;
  close(): Promise<void>;
};

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };
type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: KeyValue[]; startTimeUnixNano: string | number; endTimeUnixNano: string | number };
type OtlpBody = { resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[] };

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue ?? "";
}

/** OTLP/JSON carries ids as hex; an exporter set to base64 would send 24/12-character ids: both read as hex here. */
function hexId(id: string | undefined): string | undefined {
  if (!id) return undefined;
  if (/^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16)) return id.toLowerCase();
  return Buffer.from(id, "base64").toString("hex");
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= 16 * 1024 * 1024) chunks.push(c);
    });
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || !/json/.test(req.headers["content-type"] ?? "")) {
        res.writeHead(415).end();
        return;
      }
      let raw = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") raw = gunzipSync(raw);
      const body = JSON.parse(raw.toString("utf8")) as OtlpBody;
      state.requests++;
      for (const rs of body.resourceSpans ?? []) {
        const service = rs.resource?.attributes?.find((a) => a.key === "service.name")?.value.stringValue;
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: hexId(s.traceId)!,
              spanId: hexId(s.spanId)!,
              parentSpanId: hexId(s.parentSpanId),
              name: s.name,
              service,
              attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, valueOf(a.value)])),
              startNs: BigInt(s.startTimeUnixNano),
              endNs: BigInt(s.endTimeUnixNano),
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    spans,
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
