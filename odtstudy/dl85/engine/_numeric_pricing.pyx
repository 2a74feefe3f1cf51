# cython: language_level=3
"""The leaf and split pricing of the numeric search (C-level Cython).

Responsibility: what a leaf or a split of a node's sorted rows costs.
:class:`NumericPricing` holds the numeric searcher's rows, buffers and
objective flags (declared in ``_numeric_pricing.pxd``, with the inline
losses ``_loss`` / ``_loss_rest`` / ``_add_row`` / ``_stats_of``) and
prices: a node as one leaf (``_leaf_of``), the best depth-1 split of a
feature (``_sweep``), the statistics of every split position
(``_positions``), one side of the depth-2 pass (``_side2`` / ``_sidek`` /
``_side`` / ``_side_any``: the Python losses, the order statistics and the
row lists) and a child of a position as a leaf (``_split_leaf``).
:class:`odtstudy.dl85.engine._numeric.NumericSearcher` extends it with the nodes,
the intervals, the bounds and the search.
"""

cimport cython
from libc.math cimport INFINITY, ceil
from libc.stdint cimport int32_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset

from odtstudy.dl85.engine._objective cimport Objective
from odtstudy.dl85.engine._order cimport fw_add, fw_loss, fw_top, sorted_loss


cdef class NumericPricing(Skeleton):
    """The fields and the leaf / split pricing of
    :class:`~odtstudy.dl85.engine._numeric.NumericSearcher` (constructed by it)."""

    def __dealloc__(self):
        free(self.srt)
        free(self.cnt)
        free(self.tot)
        free(self.leafv)
        free(self.cons)
        free(self.ncons)
        free(self.key)
        free(self.keylen)
        free(self.pos_k)
        free(self.pos_t)
        free(self.pos_w)
        free(self.pos_s)
        free(self.scr)
        free(self.stk)
        free(self.stkb)
        free(self.forder)
        free(self.fk)
        free(self.buf)
        free(self.srtk)
        free(self.left)
        free(self.d2g)
        free(self.yrow)
        free(self.lrank)
        free(self.yl)
        free(self.wl)
        free(self.fen)
        free(self.qbuf)
        free(self.qout)
        free(self.qk)
        free(self.sfx)

    def _check_objective(self):
        """The objective's declarations, and their agreement with the rows'
        statistics."""
        cdef Objective o = self.obj
        if o.n != self.n:
            raise ValueError("the objective was made for another number of rows")
        self.error_stats = o.error_counts or o.weighted_error
        self.cost_stats = o.cost_matrix
        self.py_add = o.python_batches or o.python_stats
        self.order = o.order_stats
        self.by_rows = o.python_rows
        self.special = self.py_add or self.order or self.by_rows
        if (o.class_based or o.python_stats) and o.K != self.S:
            raise ValueError("stats must have one column per class (statistic) "
                             "of the objective")
        if self.order and (self.S != 2 or o.y == NULL):
            raise ValueError("the absolute / pinball losses take stats (w, w y) "
                             "and an objective with y")
        if o.squared and self.S not in (3, 4):
            raise ValueError("the squared error takes stats (w, w y, w y^2)")
        self.tau = o.order_tau
        self.below = o.order_below
        self.above = o.order_above

    # ------------------------------------------------------------ leaves
    cdef void _suffixes(self, const int32_t* rows, int m) noexcept nogil:
        """``scr[4 i: 4 i + 4]``: the stable statistics of ``rows[i:m]``."""
        cdef double* a = self.scr + 4 * m
        cdef int i, c
        for c in range(4):
            a[c] = 0.0
        for i in range(m - 1, -1, -1):
            for c in range(4):
                self.scr[4 * i + c] = a[c]
            a = self.scr + 4 * i
            self._add_row(a, rows[i])

    cdef double _stable_side(self, const int32_t* rows, int m, const int32_t* rg,
                             double best, double lb, bint* done, int* out_k) noexcept nogil:
        """The stable form of a depth-1 sweep of ``rows[:m]`` (sorted by the
        feature of ranks ``rg``): the best split below ``best`` (rows on its
        left in ``out_k``), stopping at ``lb``."""
        cdef int ms = self.min_sup, i, row, rk, last, c
        cdef double acc[4]
        cdef double v
        if m < 2 * ms or m == 0:
            return best
        self._suffixes(rows, m)
        for c in range(4):
            acc[c] = 0.0
        last = rg[rows[0]]
        for i in range(m):
            row = rows[i]
            rk = rg[row]
            if rk != last and i >= ms and m - i >= ms:
                v = self._loss(acc) + self._loss(self.scr + 4 * i)
                if v < best:
                    best = v
                    out_k[0] = i
                    if best <= lb:
                        done[0] = True
                        return best
            last = rk
            self._add_row(acc, row)
        return best

    cdef double _leaf_of(self, int d, const double* tt) noexcept nogil:
        """Loss of the depth-d node as one leaf (statistics ``tt``)."""
        cdef int i
        if self.order:
            return sorted_loss(self.yl + d * self.n, self.wl + d * self.n, self.cnt[d],
                               self.tau, self.below, self.above)
        if self.by_rows:
            if self.p > 0:
                return self.obj.rows_loss_of(self.srt + d * self.p * self.n, self.cnt[d])
            for i in range(self.n):
                self.obj.rows[i] = i
            return self.obj.rows_loss_of(self.obj.rows, self.n)
        if self.py_add:
            return self.obj.class_loss_py(tt)
        return self._loss(tt)

    # ------------------------------------------------------------ depth 1
    cdef double _sweep(self, int d, int g, int* out_k) noexcept nogil:
        """Best split of the depth-d node on feature g (its loss; INFINITY
        if none is allowed); ``out_k``: rows on its left."""
        cdef int n = self.n, S = self.S, s = self.cnt[d], i, c, row, last = -1
        cdef int ms = self.min_sup, bk = -1
        cdef const int32_t* rg = self.rank + g * n
        cdef const int32_t* lst = self.srt + (d * self.p + g) * n
        cdef const double* t = self.tot + d * S
        cdef double acc[64]
        cdef double best = INFINITY, v
        cdef const double* r
        cdef bint done = False
        if self.stable:
            best = self._stable_side(lst, s, rg, INFINITY, -INFINITY, &done, &bk)
            out_k[0] = bk
            return best
        if self.special:
            self.od = d
            best = self._side_any(lst, s, rg, t, INFINITY, -INFINITY, &done, &bk)
            out_k[0] = bk
            return best
        for c in range(S):
            acc[c] = 0.0
        for i in range(s):
            row = lst[i]
            if rg[row] != last and i >= ms and s - i >= ms:
                v = self._loss(acc) + self._loss_rest(t, acc)
                if v < best:
                    best = v
                    bk = i
            last = rg[row]
            r = self.rs + row * S
            for c in range(S):
                acc[c] += r[c]
        out_k[0] = bk
        return best

    cdef int _positions(self, int d, int f) noexcept nogil:
        """The allowed split positions of feature f at depth d: rows on the
        left, threshold rank, prefix statistics and prefix worst losses."""
        cdef int n = self.n, S = self.S, s = self.cnt[d], i, c, row, last = -1
        cdef int ms = self.min_sup, P = 0
        cdef const int32_t* rf = self.rank + f * n
        cdef const int32_t* lst = self.srt + (d * self.p + f) * n
        cdef int32_t* pk = self.pos_k + d * (n + 1)
        cdef int32_t* pt = self.pos_t + d * (n + 1)
        cdef double* pw = self.pos_w + d * (n + 1)
        cdef int PS = self.PS
        cdef double* ps = self.pos_s + d * (n + 1) * PS
        cdef double acc[64]
        cdef double w = 0.0
        cdef const double* r
        for c in range(S):
            acc[c] = 0.0
        if self.stable:
            self._suffixes(lst, s)
        for i in range(s):
            row = lst[i]
            if rf[row] != last and i >= ms and s - i >= ms:
                pk[P] = i
                pt[P] = last
                pw[P] = w
                for c in range(S):
                    ps[P * PS + c] = acc[c]
                if self.stable:  # and the right side's, from the suffixes
                    for c in range(S):
                        ps[P * PS + S + c] = self.scr[S * i + c]
                P += 1
            last = rf[row]
            if self.stable:
                self._add_row(acc, row)
                continue
            r = self.rs + row * S
            for c in range(S):
                acc[c] += r[c]
            if self.worst != NULL:
                w += self.worst[row]
        return P

    # ------------------------------------------------------------ depth 2
    cdef double _side2(self, const int32_t* keys, int m, const double* tot,
                       double best, double lb, bint* done) noexcept nogil:
        """``_side`` for two classes of unit weight, on the rows' keys
        (``rank << 4 | class``, in the feature's order): the class counts
        stay in registers, a split ``v`` above ``best`` skips ``v - best``
        rows, which are only counted, and the sweep ends when the left
        side's loss alone (which only grows) reaches ``best``."""
        cdef int ms = self.min_sup, i = 0, e, end = m - ms + 1, c1 = 0, nxt = ms, key
        cdef int t0 = <int>tot[0], t1 = <int>tot[1], a0, b0, b1, v
        # integer losses: v < best exactly when v < ceil(best)
        cdef int ibest = <int>ceil(best) if best < 2147483647.0 else 2147483647
        cdef bint improved = False
        if m < 2 * ms:
            return best
        while i < end:
            if i < nxt:
                e = nxt if nxt < end else end
                while i < e:
                    c1 += keys[i] & 15
                    i += 1
                if i == end:
                    break
            # i >= nxt >= ms >= 1: a split before row i, if values differ
            key = keys[i]
            if key >> 4 != keys[i - 1] >> 4:
                a0 = i - c1
                b0 = t0 - a0
                b1 = t1 - c1
                a0 = a0 if a0 < c1 else c1
                v = a0 + (b0 if b0 < b1 else b1)
                if v < ibest:
                    ibest = v
                    improved = True
                    if v <= lb:
                        done[0] = True
                        return v
                else:
                    nxt = i + (v - ibest) + 1
                if a0 >= ibest:
                    # the left side's loss alone only grows from here
                    break
            c1 += key & 15
            i += 1
        return ibest if improved else best

    cdef double _sidek(self, const int32_t* keys, int m, const double* tot,
                       double best, double lb, bint* done) noexcept nogil:
        """``_side2`` for 3 to 16 classes: the counts are 16-bit fields of at
        most four registers (``onehot``: each class's one in them)."""
        cdef int ms = self.min_sup, S = self.S, W = self.W, i = 0, e
        cdef int end = m - ms + 1, c, nxt = ms
        cdef int tt[16]
        cdef uint64_t aw[4]
        cdef uint64_t w0 = 0, w1 = 0, w2 = 0, w3 = 0
        cdef const uint64_t* oh = self.onehot
        cdef const uint64_t* o
        cdef int v, big_a, big_b, x, m_all = 0
        cdef int ibest = <int>ceil(best) if best < 2147483647.0 else 2147483647
        cdef bint improved = False
        if m < 2 * ms:
            return best
        for c in range(S):
            tt[c] = <int>tot[c]
            m_all += tt[c]
        while True:
            e = nxt if nxt < end else end
            while i < e:
                o = oh + W * (keys[i] & 15)
                w0 += o[0]
                if W > 1:
                    w1 += o[1]
                    if W > 2:
                        w2 += o[2]
                        if W > 3:
                            w3 += o[3]
                i += 1
            if i >= end:
                break
            # i >= nxt >= ms >= 1: a split before row i, if values differ
            nxt = i + 1
            if keys[i] >> 4 != keys[i - 1] >> 4:
                aw[0] = w0
                aw[1] = w1
                aw[2] = w2
                aw[3] = w3
                big_a = 0
                big_b = 0
                for c in range(S):
                    x = <int>((aw[c >> 2] >> ((c & 3) << 4)) & 0xFFFF)
                    if x > big_a:
                        big_a = x
                    x = tt[c] - x
                    if x > big_b:
                        big_b = x
                v = m_all - big_a - big_b
                if v < ibest:
                    ibest = v
                    improved = True
                    if v <= lb:
                        done[0] = True
                        return v
                else:
                    nxt = i + (v - ibest) + 1
                if i - big_a >= ibest:
                    # the left side's loss alone only grows from here
                    break
        return ibest if improved else best

    cdef double _side(self, const int32_t* rows, int m, const int32_t* rg,
                      const double* tot, double best, double lb, bint* done) noexcept nogil:
        """Best depth-1 split on one feature of the rows ``rows[:m]`` (sorted
        by that feature, ranks ``rg``), if below ``best``; stops at ``lb``.
        With per-row ``worst`` losses, a split ``v`` above ``best`` skips the
        next splits until the rows passed could make up ``v - best``."""
        cdef int S = self.S, ms = self.min_sup, i, c, row, rk, last
        cdef double acc[64]
        cdef double v, sk = -1.0
        cdef const double* wk = self.worst
        cdef const double* r
        cdef bint by_class = self.cls != NULL
        cdef int k
        if self.stable:
            return self._stable_side(rows, m, rg, best, lb, done, &k)
        if m < 2 * ms:
            return best
        for c in range(S):
            acc[c] = 0.0
        last = rg[rows[0]]
        for i in range(m):
            row = rows[i]
            rk = rg[row]
            if rk != last and sk < 0.0 and i >= ms and m - i >= ms:
                v = self._loss(acc) + self._loss_rest(tot, acc)
                if v < best:
                    best = v
                    if best <= lb:
                        done[0] = True
                        return best
                elif wk != NULL:
                    sk = v - best
            if wk != NULL:
                sk -= wk[row]
            last = rk
            if by_class:
                acc[self.cls[row]] += self.wt[row]
            else:
                r = self.rs + row * S
                for c in range(S):
                    acc[c] += r[c]
        return best

    cdef double _side_any(self, const int32_t* rows, int m, const int32_t* rg,
                          const double* tot, double best, double lb, bint* done,
                          int* out_k) noexcept nogil:
        """``_side`` for the objectives not priced inline (``special``); the
        best split's rows on the left in ``out_k``."""
        if m < 2 * self.min_sup or m < 2:
            return best
        if self.py_add:
            best = self._side_py(rows, m, rg, best, out_k)
        elif self.order:
            best = self._side_order(rows, m, rg, best, lb, out_k)
        else:
            best = self._side_rows(rows, m, rg, best, lb, out_k)
        if best <= lb:
            done[0] = True
        return best

    cdef double _side_py(self, const int32_t* rows, int m, const int32_t* rg,
                         double best, int* out_k) noexcept nogil:
        """Python loss of summed statistics: both sides of up to
        ``PY_CHUNK`` positions priced per ``batch_loss``. Each side is summed
        over its own rows (a backward pass for the right ones), never as a
        difference: a class absent from a side has a support of exactly 0
        for the user's function."""
        cdef int S = self.S, ms = self.min_sup, i, c, row, k = 0
        cdef double acc[64]
        cdef double* q
        for c in range(S):
            acc[c] = 0.0
        for i in range(m - 1, 0, -1):
            self._add_stats(acc, rows[i])
            if rg[rows[i]] != rg[rows[i - 1]]:
                memcpy(self.sfx + i * S, acc, S * sizeof(double))
        for c in range(S):
            acc[c] = 0.0
        for i in range(m):
            row = rows[i]
            if i > 0 and rg[row] != rg[rows[i - 1]] and i >= ms and m - i >= ms:
                q = self.qbuf + 2 * k * S
                memcpy(q, acc, S * sizeof(double))
                memcpy(q + S, self.sfx + i * S, S * sizeof(double))
                self.qk[k] = i
                k += 1
                if k == PY_CHUNK:
                    best = self._py_flush(k, best, out_k)
                    k = 0
            self._add_stats(acc, row)
        if k:
            best = self._py_flush(k, best, out_k)
        return best

    cdef double _py_flush(self, int k, double best, int* out_k) noexcept nogil:
        """Price the k positions of ``qbuf``; the best below ``best``."""
        cdef int i
        cdef double v
        self.obj.batch_loss(self.qbuf, 2 * k, self.qout)
        for i in range(k):
            v = self.qout[2 * i] + self.qout[2 * i + 1]
            if v < best:
                best = v
                out_k[0] = self.qk[i]
        return best

    cdef double _side_order(self, const int32_t* rows, int m, const int32_t* rg,
                            double best, double lb, int* out_k) noexcept nogil:
        """Absolute / pinball loss: ``rows[:m]`` are rows of the node at
        depth ``od``, ranked by target there. A backward pass prices every
        right side (into ``scr``), a forward pass every left side, each side
        a Fenwick tree over those ranks."""
        cdef int d = self.od, n = self.n, M = self.cnt[d], ms = self.min_sup
        cdef int i, k, top = fw_top(M)
        cdef const int32_t* lr = self.lrank + d * n
        cdef const double* yr = self.yl + d * n
        cdef const double* wr = self.wl + d * n
        cdef double* fw = self.fen
        cdef double* fy = self.fen + (n + 1)
        cdef double* right = self.scr
        cdef double W = 0.0, WY = 0.0, v
        memset(fw, 0, (M + 1) * sizeof(double))
        memset(fy, 0, (M + 1) * sizeof(double))
        for i in range(m - 1, 0, -1):
            k = lr[rows[i]]
            fw_add(fw, fy, M, k, wr[k], wr[k] * yr[k])
            W += wr[k]
            WY += wr[k] * yr[k]
            if rg[rows[i]] != rg[rows[i - 1]] and i >= ms and m - i >= ms:
                right[i] = fw_loss(fw, fy, M, top, W, WY, self.tau, self.below,
                                   self.above, yr)
        memset(fw, 0, (M + 1) * sizeof(double))
        memset(fy, 0, (M + 1) * sizeof(double))
        W = 0.0
        WY = 0.0
        for i in range(m - 1):
            k = lr[rows[i]]
            fw_add(fw, fy, M, k, wr[k], wr[k] * yr[k])
            W += wr[k]
            WY += wr[k] * yr[k]
            if (rg[rows[i + 1]] != rg[rows[i]] and i + 1 >= ms
                    and m - i - 1 >= ms):
                v = fw_loss(fw, fy, M, top, W, WY, self.tau, self.below,
                            self.above, yr) + right[i + 1]
                if v < best:
                    best = v
                    out_k[0] = i + 1
                    if best <= lb:
                        return best
        return best

    cdef double _side_rows(self, const int32_t* rows, int m, const int32_t* rg,
                           double best, double lb, int* out_k) noexcept nogil:
        """Python loss of the row list: each side's rows go to Python (the
        right side only when the left one leaves room under ``best``)."""
        cdef int i, ms = self.min_sup
        cdef double v
        for i in range(1, m):
            if rg[rows[i]] == rg[rows[i - 1]] or i < ms or m - i < ms:
                continue
            v = self.obj.rows_loss_of(rows, i)
            if v >= best:
                continue
            v += self.obj.rows_loss_of(rows + i, m - i)
            if v < best:
                best = v
                out_k[0] = i
                if best <= lb:
                    return best
        return best

    cdef double _split_leaf(self, int d, int f, int j, bint left) noexcept nogil:
        """Loss of one child of position j of f, as a leaf (order statistics
        and row lists; the additive objectives use the position's sums)."""
        cdef int n = self.n, s = self.cnt[d], i, m = 0, row
        cdef int t = self.pos_t[d * (n + 1) + j], nl = self.pos_k[d * (n + 1) + j]
        cdef const int32_t* rf = self.rank + f * n
        cdef const int32_t* lst
        cdef double* ys = self.fen
        cdef double* ws = self.fen + (n + 1)
        if self.by_rows:
            lst = self.srt + (d * self.p + f) * n
            if left:
                return self.obj.rows_loss_of(lst, nl)
            return self.obj.rows_loss_of(lst + nl, s - nl)
        for i in range(s):
            row = self.yrow[d * n + i]
            if (rf[row] <= t) == left:
                ys[m] = self.yl[d * n + i]
                ws[m] = self.wl[d * n + i]
                m += 1
        return sorted_loss(ys, ws, m, self.tau, self.below, self.above)

    cdef void _d2_eval(self, int d, int f, int j, double ubL, double ubR,
                       double lbL, double lbR, double* outL, double* outR) noexcept nogil:
        """Depth-1 optima of both children of position j of f: per feature,
        the node's sorted rows are split (branch-free, keeping the order)
        into the two children's, and each is swept once (``_side``).

        Only losses below ``ubL`` / ``ubR`` are sought: a side with none
        answers its bound (a lower bound then, not its optimum). A side
        stops at its lower bound ``lbL`` / ``lbR``.
        """
        cdef int n = self.n, p = self.p, S = self.S, s = self.cnt[d], g, i, c, row
        cdef int t = self.pos_t[d * (n + 1) + j], ml, mr, sd
        cdef int nl = self.pos_k[d * (n + 1) + j]
        cdef const int32_t* rf = self.rank + f * n
        cdef const int32_t* rg
        cdef const int32_t* lst
        cdef int32_t* bl = self.buf
        cdef int32_t* br = self.buf + n
        cdef double ta[64]
        cdef double tb[64]
        cdef double bestL, bestR, vL, vR
        cdef bint doneA, doneB
        cdef int gL, gR, k, key
        cdef const int32_t* kg
        cdef unsigned char* side = self.left
        cdef const int32_t* kl
        cdef const int32_t* kr
        cdef const double* ps = self.pos_s + (d * (n + 1) + j) * self.PS
        cdef const double* tt = self.tot + d * S
        for c in range(S):
            ta[c] = ps[c]
            tb[c] = ps[S + c] if self.stable else tt[c] - ps[c]
        if self.py_add:
            lst = self.srt + (d * p + f) * n
            self._stats_of(lst + nl, s - nl, tb)
        self.od = d
        if self.order or self.by_rows:
            bestL = self._split_leaf(d, f, j, True)
            bestR = self._split_leaf(d, f, j, False)
        elif self.py_add:
            bestL = self.obj.class_loss_py(ta)
            bestR = self.obj.class_loss_py(tb)
        else:
            bestL = self._loss(ta)
            bestR = self._loss(tb)
        if bestL > ubL:
            bestL = ubL
        if bestR > ubR:
            bestR = ubR
        doneA = bestL <= lbL
        doneB = bestR <= lbR
        # the features that split the children best at the last position
        # evaluated first: neighbouring positions mostly share them, and a
        # good loss early lets the other sweeps skip more
        gL = self.d2g[2 * d]
        gR = self.d2g[2 * d + 1]
        if self.unit:
            lst = self.srt + (d * p + f) * n
            for i in range(s):
                side[lst[i]] = i < nl
        for k in range(p + 2):
            if doneA and doneB:
                break
            if k == 0:
                g = gL
            elif k == 1:
                g = gR
                if g == gL:
                    continue
            else:
                g = k - 2
                if g == gL or g == gR:
                    continue
            lst = self.srt + (d * p + g) * n
            rg = NULL if self.unit else self.rank + g * n
            vL = bestL
            vR = bestR
            if self.unit:
                # the children's keys in g's order
                kg = self.srtk + (d * p + g) * n
                kl = kg
                kr = kg + nl
                ml = nl
                mr = s - nl
                if g != f:
                    ml = 0
                    mr = 0
                    for i in range(s):
                        sd = side[lst[i]]
                        key = kg[i]
                        bl[ml] = key
                        br[mr] = key
                        ml += sd
                        mr += 1 - sd
                    kl = bl
                    kr = br
                if S == 2:
                    if not doneA:
                        bestL = self._side2(kl, ml, ta, bestL, lbL, &doneA)
                    if not doneB:
                        bestR = self._side2(kr, mr, tb, bestR, lbR, &doneB)
                else:
                    if not doneA:
                        bestL = self._sidek(kl, ml, ta, bestL, lbL, &doneA)
                    if not doneB:
                        bestR = self._sidek(kr, mr, tb, bestR, lbR, &doneB)
            elif g == f:
                bestL = self._side_d2(lst, nl, rg, ta, bestL, lbL, &doneA)
                bestR = self._side_d2(lst + nl, s - nl, rg, tb, bestR, lbR, &doneB)
            else:
                ml = 0
                mr = 0
                for i in range(s):
                    row = lst[i]
                    sd = rf[row] <= t
                    bl[ml] = row
                    br[mr] = row
                    ml += sd
                    mr += 1 - sd
                if not doneA:
                    bestL = self._side_d2(bl, ml, rg, ta, bestL, lbL, &doneA)
                if not doneB:
                    bestR = self._side_d2(br, mr, rg, tb, bestR, lbR, &doneB)
            if bestL < vL:
                self.d2g[2 * d] = g
            if bestR < vR:
                self.d2g[2 * d + 1] = g
        outL[0] = bestL
        outR[0] = bestR
