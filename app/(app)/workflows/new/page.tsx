import type { Metadata } from "next";
import { Suspense } from "react";
import { WorkflowEditor } from "@/components/editor/workflow-editor";

export const metadata: Metadata = { title: "New workflow" };

export default function NewWorkflowPage() {
  return (
    <Suspense>
      <WorkflowEditor workflowId={null} />
    </Suspense>
  );
}
