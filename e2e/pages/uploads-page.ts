import { expect, type Page } from "@playwright/test";

export class UploadsPage {
  constructor(private readonly page: Page) {}

  async goto() {
    await this.page.goto("/uploads");
    await expect(this.page.getByTestId("upload-dropzone")).toBeVisible();
  }

  async upload(name: string, csv: string) {
    await this.page.getByTestId("upload-input").setInputFiles({ name, mimeType: "text/csv", buffer: Buffer.from(csv) });
    await expect(this.page.getByTestId("preview-filename")).toHaveText(name);
  }

  rowCount() {
    return this.page.getByTestId("preview-row-count");
  }

  columns() {
    return this.page.getByTestId("preview-column");
  }
}
