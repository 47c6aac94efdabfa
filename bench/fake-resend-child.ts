// The child of bench/fake-resend-process.ts: the fake Resend, answering the parent's requests for figures over IPC.
import { startFakeResend, type FakeResendOptions } from "@/test/support/fake-resend";

async function childMain() {
  const resend = await startFakeResend(JSON.parse(process.argv[2] ?? "{}") as FakeResendOptions);
  let firstEmailAt: number | null = null;
  // The first delivery's time, read every 5 ms (as the benchmarks did in-process).
  const watch = setInterval(() => {
    if (resend.emails().length > 0) {
      firstEmailAt = Date.now();
      clearInterval(watch);
    }
  }, 5);
  process.on("message", (message: { type: string; id: number }) => {
    if (message.type !== "figures") return;
    const emails = resend.emails();
    const distinct = new Set(emails.flatMap((e) => e.to)).size;
    process.send!({ type: "figures", id: message.id, delivered: emails.length, distinct, firstEmailAt });
  });
  process.on("disconnect", () => process.exit(0));
  process.send!({ type: "ready", url: resend.url });
}

childMain().catch((error) => {
  console.error(error);
  process.exit(1);
});
