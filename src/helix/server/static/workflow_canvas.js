// The canvas document's operations: what a person does on the workflow editor.
// A document is { workflow: {name, …}, nodes: [{id, x, y, step}], edges: [{from, to}] }
// (GET /workflows/NAME/canvas). These mirror helix.workflows' canvas_* functions, which
// the round-trip property tests run against the chat tool's operations.

const find = (doc, id) => {
  const node = doc.nodes.find((n) => n.id === id);
  if (!node) throw new Error(`no step ${id}`);
  return node;
};

export function addNode(doc, step, x, y) {
  doc.nodes.push({ id: step.id, x, y, step: { ...step } });
}

export function removeNode(doc, id) {
  find(doc, id);
  doc.nodes = doc.nodes.filter((n) => n.id !== id);
  doc.edges = doc.edges.filter((e) => e.from !== id && e.to !== id);
}

export function connect(doc, from, to) {
  if (!doc.edges.some((e) => e.from === from && e.to === to)) doc.edges.push({ from, to });
}

export function disconnect(doc, from, to) {
  doc.edges = doc.edges.filter((e) => !(e.from === from && e.to === to));
}

export function setField(doc, id, field, value) {
  const step = find(doc, id).step;
  if (value === null || value === undefined || value === "") delete step[field];
  else step[field] = value;
}

export function move(doc, id, x, y) {
  const node = find(doc, id);
  node.x = x;
  node.y = y;
}

// Where each node is drawn: its own place, else in columns by depth (dependencies first).
export function placed(doc) {
  const depth = {};
  const level = (id, seen = new Set()) => {
    if (depth[id] !== undefined) return depth[id];
    if (seen.has(id)) return 0;
    seen.add(id);
    const before = doc.edges.filter((e) => e.to === id).map((e) => level(e.from, seen) + 1);
    depth[id] = Math.max(0, ...before);
    return depth[id];
  };
  const rows = {};
  const where = {};
  for (const node of doc.nodes) {
    const column = level(node.id);
    const row = (rows[column] = (rows[column] ?? -1) + 1);
    where[node.id] = node.x == null || node.y == null
      ? { x: 20 + column * 220, y: 20 + row * 110 } : { x: node.x, y: node.y };
  }
  return where;
}
