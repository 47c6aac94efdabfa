import { expect, type Locator, type Page } from "@playwright/test";

type NodeType = "TRIGGER" | "DATA_SOURCE" | "AI" | "FILTER" | "OUTPUT";

export class EditorPage {
  constructor(private readonly page: Page) {}

  async gotoNew() {
    await this.page.goto("/workflows/new");
    await expect(this.page.getByTestId("canvas")).toBeVisible();
  }

  node(id: string): Locator {
    return this.page.getByTestId(`node-${id}`);
  }

  /** HTML5 drag from the palette onto the canvas at (x, y) relative to the canvas. */
  async dragFromPalette(type: NodeType, x: number, y: number) {
    await this.page.getByTestId(`palette-${type}`).dragTo(this.page.getByTestId("canvas"), { targetPosition: { x, y } });
  }

  /** Drags from the source node's bottom handle to the target node's top handle. */
  async connect(source: string, target: string) {
    const from = await this.centre(this.page.getByTestId(`handle-out-${source}`));
    const to = await this.centre(this.page.getByTestId(`handle-in-${target}`));
    await this.page.mouse.move(from.x, from.y);
    await this.page.mouse.down();
    await this.page.mouse.move(to.x, to.y, { steps: 12 });
    await this.page.mouse.up();
    await expect(this.page.locator(`.react-flow__edge[data-id="${source}->${target}"]`)).toHaveCount(1);
  }

  async select(id: string) {
    await this.node(id).click();
    await expect(this.page.getByTestId("node-id-input")).toHaveValue(id);
  }

  field(testId: string): Locator {
    return this.page.getByTestId(testId);
  }

  async setName(name: string) {
    await this.page.getByTestId("workflow-name").fill(name);
  }

  async save() {
    await this.page.getByTestId("save").click();
    await expect(this.page.getByTestId("saved")).toBeVisible();
    await expect(this.page).toHaveURL(/\/workflows\/wf_/);
  }

  async run() {
    await this.page.getByTestId("run").click();
  }

  status(id: string): Locator {
    return this.page.getByTestId(`node-status-${id}`);
  }

  /** The node's position in flow coordinates, from React Flow's transform. */
  async position(id: string): Promise<string | null> {
    return this.page.locator(`.react-flow__node[data-id="${id}"]`).evaluate((el) => (el as HTMLElement).style.transform);
  }

  private async centre(locator: Locator) {
    const box = await locator.boundingBox();
    if (!box) throw new Error("element has no box");
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  }
}
