import type { Metadata } from "next";
import { RunPage } from "@/components/runs/run-page";

export const metadata: Metadata = { title: "Run" };

export default async function Page({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  return <RunPage runId={runId} />;
}
