import type { Metadata } from "next";
import { Suspense } from "react";
import { WorkflowEditor } from "@/components/editor/workflow-editor";

export const metadata: Metadata = { title: "Editor" };

export default async function EditorPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <Suspense>
      <WorkflowEditor workflowId={id} />
    </Suspense>
  );
}
