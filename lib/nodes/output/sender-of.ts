import "server-only";
import type { ResolvedSender } from "../ports";
import { NodeError, type NodeOf, type NodeRuntime } from "../types";
import { outputData } from "./render-emails";

/** The sender each runtime (one node of one run) resolved: asked once per batch, resolved once. */
const resolvedFor = new WeakMap<NodeRuntime, Promise<ResolvedSender>>();

/**
 * The transport of an OUTPUT node: its `senderId`, else the account's default sender, else the deployment's transport
 * (through the node ports' sender port). A sender that no longer exists fails the node
 * with a sentence naming it.
 */
export function senderOf(node: NodeOf<"OUTPUT">, rt: NodeRuntime): Promise<ResolvedSender> {
  let resolved = resolvedFor.get(rt);
  if (!resolved) {
    const { senderId } = outputData(node);
    // Without a senderId: the account's default sender when the run was first claimed, if that was recorded.
    const identity = rt.emailIdentity;
    const fixedDefault = identity && "defaultSenderId" in identity ? identity.defaultSenderId : undefined;
    resolved = rt.ports.senders.resolve(rt.accountId, senderId, fixedDefault).catch((error: unknown) => {
      if (error instanceof Error && error.name === "SenderMissing") throw new NodeError(error.message, { cause: error });
      throw error;
    });
    resolvedFor.set(rt, resolved);
    resolved.catch(() => resolvedFor.delete(rt));
  }
  return resolved;
}
