// The child of bench/fake-provider-process.ts: a local fake provider (Resend's API, or an SMTP server), answering the
// parent's requests for figures over IPC.
import { startFakeResend, type FakeResendOptions } from "@/test/support/fake-resend";
import { startFakeSmtp } from "@/test/support/fake-smtp";

/** `count`, when cheap to ask every 2 ms, also times the latest delivery (the SMTP server's list of messages). */
type Fake = { url: string; port?: number; recipients(): string[][]; count?(): number; extra(): Record<string, number> };

async function startFake(kind: string, options: unknown): Promise<Fake> {
  if (kind === "smtp") {
    const smtp = await startFakeSmtp();
    return {
      url: smtp.url,
      port: smtp.port,
      recipients: () => smtp.messages.map((m) => m.to),
      count: () => smtp.messages.length,
      extra: () => ({ connections: smtp.connections, maxOpen: smtp.maxOpen }),
    };
  }
  const resend = await startFakeResend(options as FakeResendOptions);
  return { url: resend.url, recipients: () => resend.emails().map((e) => e.to), extra: () => ({}) };
}

async function childMain() {
  const fake = await startFake(process.argv[2] ?? "resend", JSON.parse(process.argv[3] ?? "{}"));
  let firstEmailAt: number | null = null;
  let lastEmailAt: number | null = null;
  let seen = 0;
  // The first delivery's time, read every 2 ms (as the benchmarks did in-process); and the latest's when that is cheap.
  const watch = setInterval(() => {
    const count = fake.count ? fake.count() : fake.recipients().length;
    if (count === seen) return;
    seen = count;
    lastEmailAt = Date.now();
    firstEmailAt ??= lastEmailAt;
    if (!fake.count) clearInterval(watch);
  }, 2);
  process.on("message", (message: { type: string; id: number }) => {
    if (message.type !== "figures") return;
    const recipients = fake.recipients();
    const distinct = new Set(recipients.flat()).size;
    process.send!({ type: "figures", id: message.id, delivered: recipients.length, distinct, firstEmailAt, lastEmailAt: fake.count ? lastEmailAt : null, ...fake.extra() });
  });
  process.on("disconnect", () => process.exit(0));
  process.send!({ type: "ready", url: fake.url, port: fake.port });
}

childMain().catch((error) => {
  console.error(error);
  process.exit(1);
});
