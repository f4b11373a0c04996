"""A self-contained HTML view of the module/class graph: no network needed to open it.

The viewer is written in-house (SVG + a small force layout in vanilla JS, ~150 lines) so nothing is
fetched: search (type a symbol, Enter centres and selects it), wheel zoom, drag to pan, click a node to
inspect kind, path:line and docstring, colour by kind or by tier. The data is embedded as JSON in a
``<script type="application/json">`` tag with ``</`` escaped, so no text from the code can end the tag.
"""

from __future__ import annotations

import json
from typing import TextIO

from acms.export.graph import GraphView

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>acms graph</title>
<style>
body{margin:0;font:13px system-ui,sans-serif;display:flex;height:100vh}
#side{width:300px;padding:10px;border-right:1px solid #ccc;overflow:auto;box-sizing:border-box}
#main{flex:1;position:relative}svg{width:100%;height:100%;cursor:grab;background:#fafafa}
.node circle{stroke:#333;stroke-width:.5}.node.sel circle{stroke:#e00;stroke-width:3}
.node.hit circle{stroke:#06c;stroke-width:2}.node text{font-size:9px;pointer-events:none}
line{stroke:#999;stroke-opacity:.5}#search{width:100%;box-sizing:border-box;padding:4px}
#legend span{display:inline-block;margin:2px 6px 2px 0}#legend i{display:inline-block;width:10px;height:10px;margin-right:3px;border-radius:5px}
#inspector{margin-top:10px;white-space:pre-wrap}
</style></head><body>
<div id="side"><input id="search" placeholder="search a symbol, Enter to select">
<label><input type="checkbox" id="bytier"> colour by tier</label>
<div id="legend"></div><div id="inspector">Click a node to inspect it.</div></div>
<div id="main"><svg id="view"><g id="world"><g id="edges"></g><g id="nodes"></g></g></svg></div>
<script type="application/json" id="graph-data">__DATA__</script>
<script>
const data = JSON.parse(document.getElementById('graph-data').textContent);
const NS = 'http://www.w3.org/2000/svg', svg = document.getElementById('view'), world = document.getElementById('world');
const palette = ['#6baed6','#fdae6b','#74c476','#9e9ac8','#fd8d3c','#e377c2','#bcbd22','#17becf','#aaaaaa'];
const colour = {}; let byTier = false;
function key(n){ return byTier ? (n.tier||'?') : n.kind; }
function col(n){ const k = key(n); if(!(k in colour)) colour[k] = palette[Object.keys(colour).length % palette.length]; return colour[k]; }
const nodes = data.nodes, idx = {}; nodes.forEach((n,i)=>{ idx[n.id]=i; });
const edges = data.edges.filter(e => e[0] in idx && e[2] in idx);
// deterministic start positions on a spiral, then a short force simulation
nodes.forEach((n,i)=>{ const a=i*2.399963, r=12*Math.sqrt(i+1); n.x=r*Math.cos(a); n.y=r*Math.sin(a); n.vx=0; n.vy=0; });
for(let it=0; it<200; it++){
  const k = 0.02*(1-it/200);
  for(let i=0;i<nodes.length;i++) for(let j=i+1;j<nodes.length && j<i+400;j++){
    const a=nodes[i], b=nodes[j]; let dx=a.x-b.x, dy=a.y-b.y, d2=dx*dx+dy*dy+0.01;
    if(d2>40000) continue; const f=300/d2; a.vx+=dx*f; a.vy+=dy*f; b.vx-=dx*f; b.vy-=dy*f; }
  edges.forEach(e=>{ const a=nodes[idx[e[0]]], b=nodes[idx[e[2]]]; const dx=b.x-a.x, dy=b.y-a.y;
    a.vx+=dx*k; a.vy+=dy*k; b.vx-=dx*k; b.vy-=dy*k; });
  nodes.forEach(n=>{ n.x+=Math.max(-20,Math.min(20,n.vx)); n.y+=Math.max(-20,Math.min(20,n.vy)); n.vx*=0.5; n.vy*=0.5; });
}
const eg = document.getElementById('edges'), ng = document.getElementById('nodes');
edges.forEach(e=>{ const a=nodes[idx[e[0]]], b=nodes[idx[e[2]]], l=document.createElementNS(NS,'line');
  l.setAttribute('x1',a.x); l.setAttribute('y1',a.y); l.setAttribute('x2',b.x); l.setAttribute('y2',b.y);
  l.setAttribute('data-relation', e[1]); eg.appendChild(l); });
const elems = nodes.map(n=>{ const g=document.createElementNS(NS,'g'); g.setAttribute('class','node');
  g.setAttribute('data-id', n.id); g.setAttribute('data-label', n.label); g.setAttribute('transform',`translate(${n.x},${n.y})`);
  const c=document.createElementNS(NS,'circle'); c.setAttribute('r', 3+Math.min(9, Math.sqrt(n.size||1)));
  const t=document.createElementNS(NS,'text'); t.setAttribute('x',6); t.setAttribute('y',3); t.textContent=n.label.split('.').pop();
  g.appendChild(c); g.appendChild(t); g.addEventListener('click', ev=>{ ev.stopPropagation(); select(n); }); ng.appendChild(g); return g; });
function paint(){ for(const k in colour) delete colour[k]; nodes.forEach((n,i)=> elems[i].firstChild.setAttribute('fill', col(n)));
  document.getElementById('legend').innerHTML = Object.entries(colour).map(([k,c])=>`<span><i style="background:${c}"></i>${k}</span>`).join(''); }
let view = {x:0,y:0,s:1};
function apply(){ world.setAttribute('transform', `translate(${view.x},${view.y}) scale(${view.s})`); }
function centre(n){ const r=svg.getBoundingClientRect(); view.x=r.width/2-n.x*view.s; view.y=r.height/2-n.y*view.s; apply(); }
function select(n){ elems.forEach(e=>e.classList.remove('sel')); elems[idx[n.id]].classList.add('sel');
  const ins = document.getElementById('inspector');
  ins.innerHTML = ''; const add=(k,v)=>{ const d=document.createElement('div'); d.className='field-'+k; d.textContent=k+': '+v; ins.appendChild(d); };
  add('name', n.label); add('kind', n.kind); add('where', n.where); add('tier', n.tier); if(n.doc) add('doc', n.doc); }
document.getElementById('search').addEventListener('input', ev=>{ const q=ev.target.value.toLowerCase();
  elems.forEach((e,i)=> e.classList.toggle('hit', q.length>1 && nodes[i].label.toLowerCase().includes(q))); });
document.getElementById('search').addEventListener('keydown', ev=>{ if(ev.key!=='Enter') return; const q=ev.target.value.toLowerCase();
  const n = nodes.find(n=>n.label.toLowerCase()===q) || nodes.find(n=>n.label.toLowerCase().endsWith('.'+q)) || nodes.find(n=>n.label.toLowerCase().includes(q));
  if(n){ select(n); centre(n); } });
document.getElementById('bytier').addEventListener('change', ev=>{ byTier=ev.target.checked; paint(); });
svg.addEventListener('wheel', ev=>{ ev.preventDefault(); const f = ev.deltaY<0 ? 1.15 : 1/1.15; const r=svg.getBoundingClientRect();
  const mx=ev.clientX-r.left, my=ev.clientY-r.top; view.x=mx-(mx-view.x)*f; view.y=my-(my-view.y)*f; view.s*=f; apply(); }, {passive:false});
let drag=null; svg.addEventListener('mousedown', ev=>{ drag={x:ev.clientX-view.x, y:ev.clientY-view.y}; });
window.addEventListener('mousemove', ev=>{ if(drag){ view.x=ev.clientX-drag.x; view.y=ev.clientY-drag.y; apply(); } });
window.addEventListener('mouseup', ()=>{ drag=null; });
paint(); { const r=svg.getBoundingClientRect(), xs=nodes.map(n=>n.x), ys=nodes.map(n=>n.y);
  const x0=Math.min(...xs,0), x1=Math.max(...xs,1), y0=Math.min(...ys,0), y1=Math.max(...ys,1);
  view.s=Math.min(4, 0.9*Math.min(r.width/(x1-x0+1), r.height/(y1-y0+1))); view.x=r.width/2-view.s*(x0+x1)/2; view.y=r.height/2-view.s*(y0+y1)/2; apply(); }
document.body.setAttribute('data-ready', String(nodes.length));
</script></body></html>
"""


def write_html(view: GraphView, out: TextIO) -> None:
    nodes = [{"id": n.id, "label": n.label, "kind": n.kind, "where": n.where, "doc": n.doc, "size": n.size,
              "tier": n.tier} for n in sorted(view.nodes.values(), key=lambda n: n.id)]
    data = json.dumps({"nodes": nodes, "edges": view.edges}, ensure_ascii=False).replace("</", "<\\/")
    out.write(PAGE.replace("__DATA__", data))
