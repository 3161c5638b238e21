import { useEffect, useState } from 'preact/hooks'
import { client } from '../api.js'
import { Link } from '../router.js'

/** An item of the project's shared menu as GET /api/v1/navigation/tree answers it (docs/navigation.md). */
interface NavNode {
  id: string
  label: string
  target: { kind: 'collection' | 'view' | 'lens' | 'flow' | 'url'; ref: string }
  children: NavNode[]
}

/** Where each kind of target opens in the UI; a registry, so a new kind is one entry. */
const opens: Record<NavNode['target']['kind'], (ref: string) => { to: string } | { href: string }> = {
  collection: (ref) => ({ to: `/collections/${encodeURIComponent(ref)}` }),
  view: (ref) => ({ to: `/views/${encodeURIComponent(ref)}` }),
  flow: (ref) => ({ to: `/flows/${encodeURIComponent(ref)}` }),
  lens: (ref) => ({ href: `/api/v1/lenses/${encodeURIComponent(ref)}/render?format=html` }),
  url: (ref) => ({ href: ref }),
}

function Item(props: { node: NavNode }) {
  const { node } = props
  const target = opens[node.target.kind]?.(node.target.ref)
  return (
    <li>
      {!target ? (
        <span>{node.label}</span>
      ) : 'to' in target ? (
        <Link to={target.to}>{node.label}</Link>
      ) : (
        <a href={target.href} target="_blank" rel="noopener noreferrer">
          {node.label}
        </a>
      )}
      {node.children.length > 0 ? (
        <ul>
          {node.children.map((child) => (
            <Item key={child.id} node={child} />
          ))}
        </ul>
      ) : null}
    </li>
  )
}

/**
 * The project's shared menu at the top of the sidebar, as the caller may see it (the server leaves out what
 * they may not open). Nothing when the project has none or the caller may not read it.
 */
export function NavigationTree() {
  const [tree, setTree] = useState<NavNode[]>([])
  useEffect(() => {
    client.transport
      .request<{ data: NavNode[] }>('GET', '/api/v1/navigation/tree')
      .then((r) => setTree(r.data))
      .catch(() => setTree([]))
  }, [])
  if (tree.length === 0) return null
  return (
    <div class="nav-section nav-tree">
      <h2>Menu</h2>
      <ul>
        {tree.map((node) => (
          <Item key={node.id} node={node} />
        ))}
      </ul>
    </div>
  )
}
