// The local fake Resend (test/support/fake-resend.ts) in a process of its own, for the in-process benchmarks: the real
// provider is on another machine, so its work (parsing 400 batch bodies of 100 emails, answering them) must not run on
// the event loop being measured. The parent asks for figures over IPC.
import { fork, type ChildProcess } from "node:child_process";
import type { FakeResendOptions } from "@/test/support/fake-resend";

export type Figures = { delivered: number; distinct: number; firstEmailAt: number | null };
type Reply = { type: "ready"; url: string } | ({ type: "figures"; id: number } & Figures);

export type FakeResendProcess = {
  url: string;
  /** Emails delivered, distinct recipients, and when (Date.now() of the child) the first email arrived. */
  figures(): Promise<Figures>;
  close(): Promise<void>;
};

/** Forks bench/fake-resend-child.ts (run from the repository's root, as every benchmark) and waits until its fake listens. */
export async function startFakeResendProcess(options: FakeResendOptions = {}): Promise<FakeResendProcess> {
  const child: ChildProcess = fork("bench/fake-resend-child.ts", [JSON.stringify(options)], { execArgv: ["--conditions=react-server", "--import", "tsx"], stdio: "inherit" });
  const waiting = new Map<number, (figures: Figures) => void>();
  let nextId = 0;
  const url = await new Promise<string>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the fake Resend process exited (${code})`)));
    child.on("message", (message: Reply) => {
      if (message.type === "ready") return resolve(message.url);
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    });
  });
  child.removeAllListeners("exit");
  return {
    url,
    figures: () =>
      new Promise<Figures>((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        child.send({ type: "figures", id });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill();
      }),
  };
}
