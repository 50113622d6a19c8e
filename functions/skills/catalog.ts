import { TRUSTED_SCAN } from './scan/object'

/** The spec's skill categories, in the order the catalog lists them (`custom` is the default). */
export const CATEGORIES = [
  'streaming',
  'events',
  'payments',
  'finance',
  'productivity',
  'communication',
  'development',
  'channels',
  'music',
  'creative',
  'marketing',
  'ai',
  'custom',
] as const

/** The name key every skill name is unique by: lower-cased and trimmed (`skills.name_key`). */
export const nameKeyOf = (name: string) => name.trim().toLowerCase()

/** A platform skill as the catalog stores it (the `skills` row's columns the platform sets). */
export interface PlatformSkill {
  id: string
  name: string
  description: string
  category: (typeof CATEGORIES)[number]
  code: string
  featured: boolean
  mcpEnabled: boolean
  mcpConfig: Record<string, unknown> | null
  widgetUrl: string | null
  widgetConfig: Record<string, unknown> | null
}

export const PLATFORM_AUTHOR = 'Platform'
/** When the platform skills were published: their `createdAt` and `updatedAt` wherever they are shown. */
export const PLATFORM_PUBLISHED_AT = new Date('2026-01-01T00:00:00.000Z')

/**
 * The platform's own skills, `trusted` (spec 2: the tier reserved for platform-authored skills). They are the
 * default catalog when the database cannot be read, and the catalog writes them into the database the first time
 * it finds them missing (functions/skills/queries.ts), so installs, ratings and downloads work on them as on any other.
 * Their names are reserved: no user creates a skill by one of them.
 */
export const PLATFORM_SKILLS: readonly PlatformSkill[] = [
  {
    id: 'platform-web-search',
    name: 'Web Search',
    description: 'Searches the web and answers with the sources it read, cited by link.',
    category: 'ai',
    code: '# Web Search\n\nWhen a question needs current information, search the web, read the two or three best results and answer with a link to each source you used.',
    featured: true,
    mcpEnabled: false,
    mcpConfig: null,
    widgetUrl: null,
    widgetConfig: null,
  },
  {
    id: 'platform-calendar-assistant',
    name: 'Calendar Assistant',
    description: 'Reads your connected calendar, finds free slots and drafts invitations for you to confirm.',
    category: 'productivity',
    code: '# Calendar Assistant\n\nUse the connected calendar to list upcoming events and free slots. Never create or change an event before the user confirms it.',
    featured: true,
    mcpEnabled: false,
    mcpConfig: null,
    widgetUrl: null,
    widgetConfig: null,
  },
  {
    id: 'platform-usdc-payments',
    name: 'USDC Payments',
    description: 'Checks wallet balances on Base and prepares USDC transfers for the owner to sign.',
    category: 'payments',
    code: '# USDC Payments\n\nReport the wallet balance (ETH and USDC on Base). Prepare transfers as unsigned requests: the owner signs every payment.',
    featured: false,
    mcpEnabled: false,
    mcpConfig: null,
    widgetUrl: null,
    widgetConfig: null,
  },
  {
    id: 'platform-github',
    name: 'GitHub',
    description: 'Reads issues and pull requests of the repositories you grant, and drafts replies and reviews.',
    category: 'development',
    code: '# GitHub\n\nUse the GitHub MCP server to read issues and pull requests. Draft comments for the owner; post nothing without approval.',
    featured: true,
    mcpEnabled: true,
    mcpConfig: { transport: 'http', url: 'https://api.githubcopilot.com/mcp/', auth: 'oauth' },
    widgetUrl: null,
    widgetConfig: null,
  },
  {
    id: 'platform-radio-dj',
    name: 'Radio DJ',
    description: 'Announces tracks and takes requests while you stream on the station.',
    category: 'music',
    code: '# Radio DJ\n\nWhile a stream is live, announce each track, read listener requests from the chat and queue the ones that fit the set.',
    featured: false,
    mcpEnabled: false,
    mcpConfig: null,
    widgetUrl: '/widgets/radio-dj',
    widgetConfig: { theme: 'dark', showQueue: true },
  },
  {
    id: 'platform-telegram-digest',
    name: 'Telegram Digest',
    description: 'Sends a daily digest of what your agent did to your Telegram channel.',
    category: 'channels',
    code: '# Telegram Digest\n\nOnce a day, summarise the conversations and tasks of the last 24 hours in five bullet points and send them to the connected Telegram channel.',
    featured: false,
    mcpEnabled: false,
    mcpConfig: null,
    widgetUrl: null,
    widgetConfig: null,
  },
]

const PLATFORM_IDS = new Set(PLATFORM_SKILLS.map((s) => s.id))
const PLATFORM_NAME_KEYS = new Set(PLATFORM_SKILLS.map((s) => nameKeyOf(s.name)))

export const isPlatformSkill = (id: string) => PLATFORM_IDS.has(id)
export const isReservedName = (name: string) => PLATFORM_NAME_KEYS.has(nameKeyOf(name))

/** A platform skill as a `skills` row to insert. */
export const platformSkillRow = (s: PlatformSkill) => ({
  ...s,
  nameKey: nameKeyOf(s.name),
  author: PLATFORM_AUTHOR,
  authorUserId: null,
  sourceUrl: null,
  scan: { ...TRUSTED_SCAN } as Record<string, unknown>,
  createdAt: PLATFORM_PUBLISHED_AT,
  updatedAt: PLATFORM_PUBLISHED_AT,
})
