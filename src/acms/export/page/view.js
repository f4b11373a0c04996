// The acms graph view: Cytoscape.js with the fCoSE compound layout, over the data embedded in the page.
// Views: packages (nested groups, summary first, expand on click), calls around an entity, a file's
// neighbourhood, tiers and history. Filters by kind, relation and path; click to inspect and preview.
(function () {
  'use strict';
  cytoscape.use(cytoscapeFcose);
  const D = JSON.parse(document.getElementById('graph-data').textContent);
  const IRI = 0, LABEL = 1, KIND = 2, PARENT = 3, WHERE = 4, TIER = 5, SIZE = 6, DOC = 7, PREVIEW = 8;
  const N = D.nodes.length, E = D.edges, M = E.length / 3;
  const parent = new Int32Array(N), children = Array.from({length: N}, () => []);
  const adjacent = Array.from({length: N}, () => []);  // edge numbers touching each node
  D.nodes.forEach((n, i) => { parent[i] = n[PARENT]; if (n[PARENT] >= 0) children[n[PARENT]].push(i); });
  for (let k = 0; k < M; k++) { adjacent[E[3 * k]].push(k); adjacent[E[3 * k + 2]].push(k); }
  const rel = name => D.rels.indexOf(name);
  const STRUCTURAL = new Set([rel('contains'), rel('defines')]);
  const FILE_KINDS = new Set(['Module', 'File'].map(k => D.kinds.indexOf(k)));
  const HISTORY_KINDS = new Set(['Change', 'Version', 'Decision', 'Plan'].map(k => D.kinds.indexOf(k)));
  const HISTORY_RELS = new Set(['touches', 'version of', 'superseded by', 'ended by', 'revision of', 'follows', 'about',
                                'plan'].map(rel));
  const state = {view: 'structure', focus: -1, selected: -1, expanded: new Set(), hiddenKinds: new Set(),
                 hiddenRels: new Set(), path: ''};
  const $ = id => document.getElementById(id);

  const cy = cytoscape({
    container: $('cy'), wheelSensitivity: 0.3, minZoom: 0.02, maxZoom: 4,
    style: [
      {selector: 'node', style: {'background-color': 'data(colour)', 'label': 'data(label)', 'font-size': 10,
        'text-valign': 'bottom', 'text-margin-y': 2, 'width': 'data(d)', 'height': 'data(d)',
        'border-width': 1, 'border-color': '#555'}},
      {selector: 'node.group', style: {'shape': 'round-rectangle', 'font-weight': 'bold', 'border-width': 2,
        'border-color': 'data(colour)', 'background-opacity': 0.85}},
      {selector: ':parent', style: {'background-opacity': 0.07, 'text-valign': 'top', 'text-halign': 'center',
        'shape': 'round-rectangle', 'border-color': 'data(colour)', 'border-width': 2, 'padding': 12}},
      {selector: 'node:selected', style: {'border-color': '#d00', 'border-width': 4}},
      {selector: 'edge', style: {'width': 'data(w)', 'line-color': 'data(colour)', 'target-arrow-color': 'data(colour)',
        'target-arrow-shape': 'triangle', 'arrow-scale': 0.8, 'curve-style': 'bezier', 'opacity': 0.75}},
      {selector: 'edge.undirected', style: {'target-arrow-shape': 'none'}},
    ],
  });

  // -- which nodes are shown ----------------------------------------------------------------------
  function matches() {  // path filter: a node matches when it or a descendant has the text in its path
    const q = state.path.toLowerCase(), ok = new Uint8Array(N);
    for (let i = N - 1; i >= 0; i--) {
      if (!q || ok[i] || D.nodes[i][WHERE].toLowerCase().includes(q) || D.nodes[i][LABEL].toLowerCase().includes(q)) {
        ok[i] = 1; if (parent[i] >= 0) ok[parent[i]] = 1;
      }
    }
    return ok;
  }
  function shownKind(i) { return !state.hiddenKinds.has(D.nodes[i][KIND]); }
  function representatives() {  // each node's nearest shown ancestor-or-self in the packages view
    const rep = new Int32Array(N);
    for (let i = 0; i < N; i++) {
      const p = parent[i];
      rep[i] = p < 0 ? i : (rep[p] === p && state.expanded.has(p)) ? i : rep[p];
    }
    return rep;
  }
  function fileOf(i) { let j = i; while (j >= 0 && !FILE_KINDS.has(D.nodes[j][KIND])) j = parent[j]; return j < 0 ? i : j; }
  function isAncestor(a, b) { for (let j = parent[b]; j >= 0; j = parent[j]) if (j === a) return true; return false; }
  function descendants(i, cap) {
    const out = [], todo = [i];
    while (todo.length && out.length < cap) { const j = todo.pop(); out.push(j); todo.push(...children[j]); }
    return out;
  }

  // -- elements of each view -----------------------------------------------------------------------
  function nodeElement(i, parentId, extra) {
    const n = D.nodes[i], group = children[i].length > 0 && state.view === 'structure' && !state.expanded.has(i);
    const size = group ? 22 + Math.min(40, 4 * Math.sqrt(countBelow[i])) : 10 + Math.min(18, Math.sqrt(n[SIZE]));
    const short = n[LABEL].length > 40 ? '…' + n[LABEL].slice(-39) : n[LABEL];
    const data = {id: 'n' + i, i: i, label: group ? short + ' (' + countBelow[i] + ')' : short,
                  colour: D.colours[n[KIND]], d: size, ...extra};
    if (parentId) data.parent = parentId;
    return {group: 'nodes', data: data, classes: group ? 'group' : ''};
  }
  function edgeElements(pairs) {
    const out = [];
    pairs.forEach((count, key) => {
      const [s, r, d] = key.split(',').map(Number);
      out.push({group: 'edges', data: {id: 'e' + key, source: 'n' + s, target: 'n' + d, relation: D.rels[r],
        colour: D.relColours[r], w: Math.min(6, 1 + Math.log2(count)), count: count},
        classes: D.directed[r] ? '' : 'undirected'});
    });
    return out;
  }
  function link(pairs, s, r, d) { if (s !== d) { const key = s + ',' + r + ',' + d; pairs.set(key, (pairs.get(key) || 0) + 1); } }
  function usable(r) { return !STRUCTURAL.has(r) && !state.hiddenRels.has(r); }

  function structure() {  // history (commits, versions, decisions) has its own view
    const rep = representatives(), ok = matches(), shown = new Uint8Array(N), nodes = [];
    for (let i = 0; i < N; i++) {
      if (rep[i] !== i || !ok[i] || !shownKind(i) || HISTORY_KINDS.has(D.nodes[i][KIND]) ||
          (parent[i] >= 0 && !shown[parent[i]])) continue;
      shown[i] = 1;
      nodes.push(nodeElement(i, parent[i] >= 0 ? 'n' + parent[i] : null));
    }
    const pairs = new Map();
    for (let k = 0; k < M; k++) {
      const r = E[3 * k + 1]; if (!usable(r) || HISTORY_RELS.has(r)) continue;
      const s = rep[E[3 * k]], d = rep[E[3 * k + 2]];
      if (s === d || !shown[s] || !shown[d] || isAncestor(s, d) || isAncestor(d, s)) continue;
      link(pairs, s, r, d);
    }
    return nodes.concat(edgeElements(pairs));
  }

  function around(seeds, rels, depth, cap) {  // nodes within `depth` edges of the seeds over `rels`
    const seen = new Map(seeds.map(i => [i, 0])), todo = seeds.slice();
    while (todo.length && seen.size < cap) {
      const i = todo.shift(), level = seen.get(i);
      if (level >= depth) continue;
      for (const k of adjacent[i]) {
        if (!rels.has(E[3 * k + 1])) continue;
        const j = E[3 * k] === i ? E[3 * k + 2] : E[3 * k];
        if (!seen.has(j) && shownKind(j) && seen.size < cap) { seen.set(j, level + 1); todo.push(j); }
      }
    }
    return seen;
  }

  function calls() {
    const callRels = new Set([rel('calls')].filter(r => r >= 0 && !state.hiddenRels.has(r)));
    const focus = state.focus >= 0 ? state.focus : busiest(callRels);
    if (focus < 0) return [];
    const near = around(descendants(focus, 40), callRels, 2, 160), nodes = [], pairs = new Map();
    near.forEach((_, i) => nodes.push(nodeElement(i, null, {focus: i === focus})));
    for (const i of near.keys()) for (const k of adjacent[i]) {
      const r = E[3 * k + 1], s = E[3 * k], d = E[3 * k + 2];
      if (callRels.has(r) && s === i && near.has(d)) link(pairs, s, r, d);
    }
    state.focus = focus;
    return nodes.concat(edgeElements(pairs));
  }

  function fileView() {
    const focus = fileOf(state.focus >= 0 ? state.focus : largestFile());
    if (focus < 0) return [];
    state.focus = focus;
    const inside = new Set(descendants(focus, 400)), nodes = [], pairs = new Map(), outside = new Set();
    const added = new Set();
    inside.forEach(i => {  // descendants come after their parent: a parent is added before its children
      if (!(shownKind(i) || i === focus) || (i !== focus && !added.has(parent[i]))) return;
      added.add(i); nodes.push(nodeElement(i, i !== focus ? 'n' + parent[i] : null));
    });
    for (const i of added) for (const k of adjacent[i]) {
      const r = E[3 * k + 1]; if (!usable(r)) continue;
      const s = E[3 * k], d = E[3 * k + 2];
      const a = inside.has(s) ? s : fileOf(s), b = inside.has(d) ? d : fileOf(d);
      if ((inside.has(a) && !added.has(a)) || (inside.has(b) && !added.has(b)) || !shownKind(a) || !shownKind(b)) continue;
      if (inside.has(a) && inside.has(b) && (isAncestor(a, b) || isAncestor(b, a))) continue;
      if (!inside.has(a)) outside.add(a); if (!inside.has(b)) outside.add(b);
      link(pairs, a, r, b);
    }
    outside.forEach(i => nodes.push(nodeElement(i, null)));
    return nodes.concat(edgeElements(pairs));
  }

  function tiers() {  // files by tier; commits, decisions and plans with what they touched or are about
    const VERSION = D.kinds.indexOf('Version'), members = new Set(), pairs = new Map(), nodes = [], ok = matches();
    const versions = new Map();  // file-level node -> stored old versions of it or its members
    const at = i => (HISTORY_KINDS.has(D.nodes[i][KIND]) && D.nodes[i][KIND] !== VERSION) ? i : fileOf(i);
    for (let k = 0; k < M; k++) {
      const r = E[3 * k + 1]; if (!HISTORY_RELS.has(r) || state.hiddenRels.has(r)) continue;
      const s = E[3 * k], d = E[3 * k + 2];
      if (D.nodes[s][KIND] === VERSION) {  // a version is counted on its file, not drawn
        if (D.rels[r] === 'version of') versions.set(fileOf(d), (versions.get(fileOf(d)) || 0) + 1);
        continue;
      }
      const a = at(s), b = at(d);
      if (a === b || D.nodes[b][KIND] === VERSION || !ok[a] || !ok[b] || !shownKind(a) || !shownKind(b)) continue;
      members.add(a); members.add(b); link(pairs, a, r, b);
    }
    versions.forEach((_, i) => { if (ok[i] && shownKind(i)) members.add(i); });
    const files = [];
    for (let i = 0; i < N; i++) if (FILE_KINDS.has(D.nodes[i][KIND]) && ok[i] && shownKind(i) && !members.has(i)) files.push(i);
    const quiet = files.length > 150;  // many files without history: a count per tier, not a node each
    if (!quiet) files.forEach(i => members.add(i));
    for (let i = 0; i < N; i++) {
      const kind = D.nodes[i][KIND];
      if (HISTORY_KINDS.has(kind) && kind !== VERSION && ok[i] && shownKind(i)) members.add(i);
    }
    const per = new Set();
    members.forEach(i => {
      const t = D.nodes[i][TIER], element = nodeElement(i, 't' + t);
      if (versions.has(i)) element.data.label += ' · ' + versions.get(i) + ' old version' + (versions.get(i) > 1 ? 's' : '');
      per.add(t); nodes.push(element);
    });
    const counts = new Map();
    if (quiet) files.forEach(i => { const t = D.nodes[i][TIER]; per.add(t); counts.set(t, (counts.get(t) || 0) + 1); });
    per.forEach(t => nodes.push({group: 'nodes', data: {id: 't' + t, label: 'tier: ' + (D.tiers[t] || '?'), colour: '#888', d: 20}}));
    counts.forEach((c, t) => nodes.push({group: 'nodes', data: {id: 'q' + t, parent: 't' + t, label: c + ' files without history',
      colour: D.colours[D.kinds.indexOf('Module')] || '#ccc', d: 24}}));
    return nodes.concat(edgeElements(pairs));
  }

  function busiest(rels) {
    let best = -1, most = 0;
    for (let i = 0; i < N; i++) { let c = 0; for (const k of adjacent[i]) if (rels.has(E[3 * k + 1])) c++; if (c > most) { most = c; best = i; } }
    return best;
  }
  function largestFile() {
    let best = -1;
    for (let i = 0; i < N; i++) if (FILE_KINDS.has(D.nodes[i][KIND]) && (best < 0 || countBelow[i] > countBelow[best])) best = i;
    return best;
  }
  const countBelow = new Int32Array(N);
  for (let i = N - 1; i >= 0; i--) if (parent[i] >= 0) countBelow[parent[i]] += 1 + countBelow[i];

  // -- drawing -------------------------------------------------------------------------------------
  const VIEWS = {structure: structure, calls: calls, file: fileView, tiers: tiers};
  function render() {
    const elements = VIEWS[state.view]();
    cy.batch(() => { cy.elements().remove(); cy.add(elements); });
    const layout = cy.layout({name: elements.length > 1 ? 'fcose' : 'grid', animate: false, randomize: true,
      quality: cy.nodes().length > 600 ? 'draft' : 'default', nodeDimensionsIncludeLabels: true, packComponents: true,
      nodeRepulsion: 12000, idealEdgeLength: 80, nodeSeparation: 90, fit: true, padding: 20});
    layout.run();
    if (state.selected >= 0) cy.$id('n' + state.selected).select();
    const shown = cy.nodes().filter(n => n.data('i') !== undefined).length;
    $('status').textContent = `${shown} of ${N} nodes, ${cy.edges().length} edges shown` +
      (state.view !== 'structure' && state.focus >= 0 ? ` — around ${D.nodes[state.focus][LABEL]}` : '');
    document.body.setAttribute('data-visible', String(shown));
    document.body.setAttribute('data-view', state.view);
  }

  function field(box, key, value, pre) {
    const row = document.createElement(pre ? 'pre' : 'div');
    if (!pre) { row.className = 'field field-' + key; const k = document.createElement('span'); k.className = 'k'; k.textContent = key + ': '; row.appendChild(k); }
    row.appendChild(document.createTextNode(value)); box.appendChild(row);
  }
  function button(box, text, action) { const b = document.createElement('button'); b.textContent = text; b.addEventListener('click', action); box.appendChild(b); }
  function select(i) {
    state.selected = i;
    const n = D.nodes[i], box = $('inspector');
    box.innerHTML = '';
    field(box, 'name', n[LABEL]); field(box, 'kind', D.kinds[n[KIND]]);
    if (n[WHERE]) field(box, 'where', n[WHERE]);
    if (n[TIER] >= 0) field(box, 'tier', D.tiers[n[TIER]]);
    if (n[DOC]) field(box, 'doc', n[DOC]);
    field(box, 'iri', n[IRI]);
    if (n[PREVIEW]) field(box, 'preview', n[PREVIEW], true);
    if (children[i].length) button(box, state.expanded.has(i) ? 'Collapse' : 'Expand', () => { toggle(i); select(i); });
    button(box, 'Show neighbours', () => { showNeighbours(i); });
    button(box, 'Calls around', () => { switchView('calls', i); });
    button(box, 'File neighbourhood', () => { switchView('file', i); });
    cy.elements().unselect(); cy.$id('n' + i).select();
  }
  function reveal(i) { for (let j = parent[i]; j >= 0; j = parent[j]) state.expanded.add(j); }
  function toggle(i) { if (state.expanded.has(i)) state.expanded.delete(i); else state.expanded.add(i); render(); }
  function showNeighbours(i) {
    if (state.view !== 'structure') { switchView(state.view, i); return; }
    state.expanded.add(i);
    for (const k of adjacent[i]) if (usable(E[3 * k + 1])) { reveal(E[3 * k]); reveal(E[3 * k + 2]); }
    render(); select(i);
  }
  function switchView(view, focus) {
    state.view = view; if (focus !== undefined) state.focus = focus;
    document.querySelector(`input[name=view][value="${view}"]`).checked = true;
    render(); if (state.focus >= 0 && view !== 'structure') select(state.focus);
  }
  function centre(i) { const el = cy.$id('n' + i); if (el.length) { cy.zoom(Math.max(cy.zoom(), 1)); cy.center(el); } }

  cy.on('tap', 'node', ev => {
    const i = ev.target.data('i'); if (i === undefined) return;
    if (state.view === 'structure' && children[i].length && !state.expanded.has(i)) { state.expanded.add(i); render(); }
    select(i);
  });
  document.querySelectorAll('input[name=view]').forEach(r => r.addEventListener('change', ev => switchView(ev.target.value)));
  $('search').addEventListener('keydown', ev => {
    if (ev.key !== 'Enter') return;
    const q = ev.target.value.trim().toLowerCase(); if (!q) return;
    const label = i => D.nodes[i][LABEL].toLowerCase();
    let found = -1;
    for (const test of [i => label(i) === q, i => label(i).endsWith('.' + q), i => D.nodes[i][WHERE].toLowerCase().startsWith(q), i => label(i).includes(q)]) {
      for (let i = 0; i < N && found < 0; i++) if (test(i)) found = i;
      if (found >= 0) break;
    }
    if (found < 0) { $('status').textContent = `nothing matches "${ev.target.value}"`; return; }
    if (state.view === 'structure') { reveal(found); render(); } else { state.focus = found; render(); }
    select(found); centre(found);
  });
  let pathTimer = 0;
  $('path').addEventListener('input', ev => { clearTimeout(pathTimer); pathTimer = setTimeout(() => { state.path = ev.target.value.trim(); render(); }, 250); });

  function legend(box, names, colours, hidden, swatch) {
    names.forEach((name, i) => {
      if (!present[box.id].has(i)) return;
      const row = document.createElement('label'), box2 = document.createElement('input'), mark = document.createElement(swatch);
      box2.type = 'checkbox'; box2.checked = true; box2.dataset.name = name;
      box2.addEventListener('change', () => { if (box2.checked) hidden.delete(i); else hidden.add(i); render(); });
      mark.style.background = colours[i];
      row.appendChild(box2); row.appendChild(mark); row.appendChild(document.createTextNode(name));
      row.dataset.colour = colours[i]; box.appendChild(row);
    });
  }
  const present = {kinds: new Set(D.nodes.map(n => n[KIND])), rels: new Set()};
  for (let k = 0; k < M; k++) if (!STRUCTURAL.has(E[3 * k + 1])) present.rels.add(E[3 * k + 1]);
  legend($('kinds'), D.kinds, D.colours, state.hiddenKinds, 'i');
  legend($('rels'), D.rels, D.relColours, state.hiddenRels, 'b');

  // the summary level: the top-level packages and modules (a lone root folder is opened)
  let top = [];
  for (let i = 0; i < N; i++) if (parent[i] < 0 && !HISTORY_KINDS.has(D.nodes[i][KIND])) top.push(i);
  while (top.length === 1 && children[top[0]].length) { state.expanded.add(top[0]); top = children[top[0]]; }
  render();
  window.acmsView = {cy: cy, state: state, render: render, select: select, switchView: switchView};
  document.body.setAttribute('data-ready', String(N));
})();
