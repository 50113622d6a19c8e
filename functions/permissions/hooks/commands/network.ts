// Network clients are dangerous (they can fetch code and send data out); a command run on another host over ssh
// is classified too; database clients are dangerous, and destructive when their SQL drops or empties data.
import type { Invocation } from '../scope'
import { operands, values } from './args'
import type { Rule } from './rule'

const network: Rule = (inv) => inv.flag('dangerous', 'network access')

const NETWORK = [
  'curl', 'wget', 'fetch', 'nc', 'ncat', 'netcat', 'socat', 'telnet', 'ftp', 'sftp', 'scp', 'tftp', 'http', 'https',
  'xh', 'aria2c', 'ping', 'ping6', 'dig', 'nslookup', 'host', 'whois', 'traceroute', 'tracepath', 'mtr', 'mosh',
  'openssl', 'lftp', 'axel', 'websocat', 'grpcurl', 'nmap',
]

const SSH_VALUED = ['-b', '-c', '-D', '-E', '-e', '-F', '-I', '-i', '-J', '-L', '-l', '-m', '-O', '-o', '-p', '-Q', '-R', '-S', '-W', '-w', '-B']

/** `ssh host command…`: the remote command line is classified as well (wiping another host is still wiping). */
const ssh: Rule = (inv) => {
  inv.flag('dangerous', 'network access')
  const [, ...remote] = operands(inv.args, { valued: SSH_VALUED })
  if (!remote.length) return
  const words = values(remote)
  if (words) inv.runScript(words.join(' '))
}

// SQL (and the Mongo/Redis equivalents) that loses data: dropping databases/tables, truncating, deleting every row.
const DESTRUCTIVE_SQL = /\bdrop\s+(database|schema|table|keyspace|collection)\b|\btruncate\s+(table\s+)?[\w."`]|\bdelete\s+from\s+[\w."`]+\s*(;|$)|\.drop(database)?\s*\(|\bflushall\b|\bflushdb\b/i

/** A database client: what it is told to run (arguments, piped or here-document input) decides. */
const database: Rule = (inv) => {
  const text = [...inv.args.map((a) => a.value ?? ''), inv.stdin.kind === 'text' ? inv.stdin.text : ''].join('\n')
  if (DESTRUCTIVE_SQL.test(text)) return inv.flag('destructive', 'drops or empties data')
  inv.flag('dangerous', 'database access')
}

const DATABASES = ['psql', 'mysql', 'mariadb', 'sqlite3', 'sqlite', 'mongo', 'mongosh', 'redis-cli', 'cqlsh', 'clickhouse-client', 'sqlcmd', 'duckdb']

export const networkRules: Record<string, Rule> = {
  ...Object.fromEntries(NETWORK.map((n) => [n, network])),
  ssh,
  ...Object.fromEntries(DATABASES.map((n) => [n, database])),
  dropdb: (inv: Invocation) => inv.flag('destructive', 'drops a database'),
  mysqladmin: (inv) => (inv.args.some((a) => /^drop$/i.test(a.value ?? '')) ? inv.flag('destructive', 'drops a database') : inv.flag('dangerous', 'database administration')),
}
