import type { Metadata } from "next";
import { UploadsPage } from "@/components/uploads/uploads-page";

export const metadata: Metadata = { title: "Uploads" };

export default function Page() {
  return <UploadsPage />;
}
