"""Maximum flow / minimum cut, by Dinic's algorithm (what torch gets from networkx).

The problem: a directed graph with a ``source``, a ``sink`` and a capacity on every edge.  A
*cut* splits the vertices into S (containing the source) and T (containing the sink); its
value is the total capacity of the edges from S to T.  By the max-flow/min-cut theorem the
smallest cut equals the largest flow, and after a maximum flow the vertices still reachable
from the source through edges with spare capacity form the S side of a minimum cut.

Dinic's algorithm, in three lines:

1. BFS from the source over edges with spare capacity, labelling each vertex with its level;
   stop when the sink is unreachable (the flow is maximal).
2. Push *blocking flow* along level-increasing paths with an iterative DFS, remembering per
   vertex which edge to try next (``it``), so every edge is saturated or skipped once per phase.
3. Repeat.  Each phase lengthens the shortest augmenting path, so there are at most ``V`` phases.

Edges live in flat arrays (``to``, ``cap``); edge ``e`` and its reverse are ``e`` and ``e ^ 1``.
Infinite capacities are ``math.inf``; a cut of infinite value means no finite cut exists.
"""

from __future__ import annotations

import math
from collections import deque


class MaxFlow:
    def __init__(self):
        self.index: dict = {}
        self.names: list = []
        self.adj: list[list[int]] = []
        self.to: list[int] = []
        self.cap: list[float] = []

    def node(self, name) -> int:
        i = self.index.get(name)
        if i is None:
            i = self.index[name] = len(self.names)
            self.names.append(name)
            self.adj.append([])
        return i

    def add_edge(self, u, v, capacity: float) -> None:
        a, b = self.node(u), self.node(v)
        self.adj[a].append(len(self.to))
        self.to.append(b)
        self.cap.append(float(capacity))
        self.adj[b].append(len(self.to))
        self.to.append(a)
        self.cap.append(0.0)

    def _bfs(self, s: int, t: int) -> list[int] | None:
        level = [-1] * len(self.names)
        level[s] = 0
        queue = deque([s])
        to, cap, adj = self.to, self.cap, self.adj
        while queue:
            u = queue.popleft()
            for e in adj[u]:
                v = to[e]
                if cap[e] > 0 and level[v] < 0:
                    level[v] = level[u] + 1
                    queue.append(v)
        return level if level[t] >= 0 else None

    def _blocking_flow(self, s: int, t: int, level: list[int]) -> float:
        to, cap, adj = self.to, self.cap, self.adj
        it = [0] * len(self.names)
        total = 0.0
        while True:
            # iterative DFS for one augmenting path along increasing levels
            path: list[int] = []  # edges
            u = s
            while u != t:
                advanced = False
                edges = adj[u]
                while it[u] < len(edges):
                    e = edges[it[u]]
                    v = to[e]
                    if cap[e] > 0 and level[v] == level[u] + 1:
                        path.append(e)
                        u = v
                        advanced = True
                        break
                    it[u] += 1
                if not advanced:
                    if u == s:
                        return total
                    level[u] = -1  # dead end: never visit again this phase
                    e = path.pop()
                    u = to[e ^ 1]
                    it[u] += 1
            push = min(cap[e] for e in path)
            if push == math.inf:  # an all-infinite path: no finite cut (and inf - inf is nan)
                return math.inf
            for e in path:
                cap[e] -= push
                cap[e ^ 1] += push
            total += push

    def max_flow(self, source, sink) -> float:
        s, t = self.node(source), self.node(sink)
        flow = 0.0
        while True:
            level = self._bfs(s, t)
            if level is None:
                return flow
            pushed = self._blocking_flow(s, t, level)
            flow += pushed
            if flow == math.inf:
                return flow

    def min_cut(self, source, sink) -> tuple[float, set, set]:
        """(cut value, S side names, T side names) of a minimum source/sink cut.

        With no finite cut the value is ``inf`` and the "S side" (what the source reaches)
        holds the sink too: the infinite path is inside it.
        """
        value = self.max_flow(source, sink)
        s = self.node(source)
        seen = {s}
        stack = [s]
        while stack:
            u = stack.pop()
            for e in self.adj[u]:
                v = self.to[e]
                if self.cap[e] > 0 and v not in seen:
                    seen.add(v)
                    stack.append(v)
        side_s = {self.names[i] for i in seen}
        side_t = {n for n in self.names if n not in side_s}
        return value, side_s, side_t


def min_cut(edges, source, sink) -> tuple[float, set, set]:
    """Convenience: ``edges`` is an iterable of ``(u, v, capacity)``."""
    g = MaxFlow()
    g.node(source)
    g.node(sink)
    for u, v, c in edges:
        g.add_edge(u, v, c)
    return g.min_cut(source, sink)
