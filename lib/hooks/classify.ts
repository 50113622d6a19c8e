/** Permission tiers of a tool call (spec 2 "Tool-call classification result"), strictest last. */
export type ToolTier = 'safe' | 'dangerous' | 'destructive'

export interface ToolClassification {
  tier: ToolTier
  reason: string
}

/**
 * Classifies one tool call. PLACEHOLDER with the spec's non-shell rules only (read safe, unknown tools and
 * shell commands dangerous, writes to sensitive paths dangerous) until the shell-parsing classifier lands.
 */
export function classifyToolCall(toolName: string, toolInput: Record<string, unknown>): ToolClassification {
  const tool = toolName.toLowerCase()
  if (tool === 'read' || tool === 'file_read') return { tier: 'safe', reason: 'Reading files is allowed' }
  if (tool === 'write' || tool === 'file_write') {
    const path = String(toolInput.path ?? toolInput.file_path ?? '')
    return /(^|\/)(\.env|\.ssh|credentials)/.test(path)
      ? { tier: 'dangerous', reason: 'Writes a sensitive path' }
      : { tier: 'safe', reason: 'Writes an ordinary path' }
  }
  return { tier: 'dangerous', reason: tool === 'bash' || tool === 'exec' || tool === 'shell' ? 'Shell command' : 'Unknown tool' }
}
