import type { Metadata } from "next";
import { RunsListPage } from "@/components/runs/runs-list-page";

export const metadata: Metadata = { title: "Runs" };

export default function Page() {
  return <RunsListPage />;
}
