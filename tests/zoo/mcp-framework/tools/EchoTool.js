import { MCPTool } from "mcp-framework";
import { z } from "../zod.js";

export default class EchoTool extends MCPTool {
  name = "echo";
  description = "Say the text back";
  schema = z.object({
    text: z.string().describe("The text to say back"),
  });

  async execute(input) {
    return input.text;
  }
}
