import { MCPTool } from "mcp-framework";
import { z } from "../zod.js";

export default class AddTool extends MCPTool {
  name = "add";
  description = "Add two numbers";
  schema = z.object({
    a: z.number().describe("The first number"),
    b: z.number().describe("The second number"),
  });

  async execute(input) {
    return String(input.a + input.b);
  }
}
