import { expect, test } from "./fixtures";

test("the demo builds a working workflow in one click", async ({ page, signedIn: _signedIn, editor, shot }) => {
  await page.getByTestId("try-demo").first().click();
  await expect(page).toHaveURL(/\/workflows\/wf_/);
  await expect(editor.node("thank_you")).toBeVisible();
  await expect(page.getByTestId("validation-status")).toHaveAttribute("data-valid", "true");
  await shot("editor-demo");
  await editor.run();
  await expect(editor.status("thank_you")).toHaveAttribute("data-status", "SUCCESS", { timeout: 60_000 });
  await expect(page.getByTestId("summary-emails-sent")).toHaveText("4");
  await page.getByTestId("tab-run").click();
  await expect(page.getByTestId("run-history-item")).toHaveCount(1);
  await page.getByRole("link", { name: "Details" }).click();
  await expect(page).toHaveURL(/\/runs\/run_/);
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", "SUCCESS");
  await shot("run");

  await page.getByTestId("nav-workflows").click();
  await expect(page.getByTestId("workflow-row")).toHaveCount(1);
  await expect(page.getByTestId("workflow-row")).toContainText("Success");
  await shot("workflows");
});

test("settings and the API reference render", async ({ page, signedIn, shot }) => {
  await page.getByTestId("nav-settings").click();
  await expect(page.getByTestId("account-email")).toHaveText(signedIn.email);
  await expect(page.getByTestId("account-name")).toHaveValue(signedIn.fullName);
  await page.getByTestId("ai-provider").selectOption("openai-compatible");
  await page.getByTestId("ai-key").fill("sk-test-abcd1234");
  await page.getByTestId("ai-base-url").fill("http://127.0.0.1:9/v1");
  await page.getByTestId("ai-model").fill("tiny");
  await page.getByTestId("ai-save").click();
  await expect(page.getByTestId("ai-current")).toContainText("1234");
  await page.getByTestId("webhook-url").fill("http://127.0.0.1:9/hook");
  await page.getByTestId("webhook-create").click();
  await expect(page.getByTestId("webhook-secret")).toContainText("whsec_");
  await shot("settings");

  await page.getByTestId("nav-api").click();
  await expect(page.getByTestId("api-operation").first()).toBeVisible();
  await expect(page.getByTestId("api-groups")).toContainText("/api/workflows");
  await shot("api-docs");
});
