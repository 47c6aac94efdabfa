// A local fake provider in a process of its own, for the in-process benchmarks: the fake Resend
// (test/support/fake-resend.ts) or the SMTP server (test/support/fake-smtp.ts). The real provider is on another
// machine, so its work (parsing 400 batch bodies of 100 emails, or 5,000 SMTP conversations, and answering them) must
// not run on the event loop being measured. The parent asks for figures over IPC.
import { fork, type ChildProcess } from "node:child_process";
import type { FakeResendOptions } from "@/test/support/fake-resend";

/** `lastEmailAt`: the latest delivery's time, from the SMTP server (null from the fake Resend). */
export type Figures = { delivered: number; distinct: number; firstEmailAt: number | null; lastEmailAt: number | null };
/** The SMTP server's figures also count its connections: ever opened, and most open at once. */
export type SmtpFigures = Figures & { connections: number; maxOpen: number };
type Reply<F> = { type: "ready"; url: string; port?: number } | ({ type: "figures"; id: number } & F);

export type FakeProviderProcess<F extends Figures = Figures> = {
  url: string;
  /** The SMTP server's port. */
  port?: number;
  /** Emails delivered, distinct recipients, and when (Date.now() of the child) the first email arrived. */
  figures(): Promise<F>;
  close(): Promise<void>;
};

/** The fake Resend in a process of its own. */
export const startFakeResendProcess = (options: FakeResendOptions = {}) => startFakeProvider("resend", options);

/** The SMTP server (smtp-server, no TLS, AUTH optional) in a process of its own. */
export const startFakeSmtpProcess = () => startFakeProvider<SmtpFigures>("smtp", {});

/** Forks bench/fake-provider-child.ts (run from the repository's root, as every benchmark) and waits until its fake listens. */
async function startFakeProvider<F extends Figures = Figures>(kind: "resend" | "smtp", options: object): Promise<FakeProviderProcess<F>> {
  const child: ChildProcess = fork("bench/fake-provider-child.ts", [kind, JSON.stringify(options)], { execArgv: ["--conditions=react-server", "--import", "tsx"], stdio: "inherit" });
  const waiting = new Map<number, (figures: F) => void>();
  let nextId = 0;
  const { url, port } = await new Promise<{ url: string; port?: number }>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the fake ${kind} process exited (${code})`)));
    child.on("message", (message: Reply<F>) => {
      if (message.type === "ready") return resolve(message);
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    });
  });
  child.removeAllListeners("exit");
  return {
    url,
    port,
    figures: () =>
      new Promise<F>((resolve) => {
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
