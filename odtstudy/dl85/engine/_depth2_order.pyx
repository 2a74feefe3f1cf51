# cython: language_level=3
"""Depth-2 order-statistics solvers (C-level Cython; see ``_depth2.pyx``).

``Depth2Order`` adds to ``_depth2_counts.Depth2Counts`` the absolute and
pinball losses: ``_d2_ranks`` over the cover's rows packed in target order,
where a quadrant's quantile is its k-th row (pair counts, prefix counts and
sums of y per word, ``odt_and_prefix``), ``_depth1_ranks`` for depth 1
(popcounts and the objective's byte tables of y), ``_depth1_order`` with
weights, and several quantiles at once (``quantiles``, ``solve_quantiles``).
``_kernels.h`` is static: this module has its own copy of the kernels,
chosen by ``_select_kernels``.
"""

from libc.math cimport ceil
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free

from odtstudy.dl85.engine._cache cimport FEATURE_LEAF
from odtstudy.dl85.engine._depth2_counts cimport (
    _kernels_select,
    _compact_soft,
    _imin,
    _last_mask,
    _Quantile,
    _Quantiles,
    _Taus,
)
from odtstudy.dl85.engine._kernels cimport (
    odt_and_prefix,
    odt_compact,
    odt_ctz,
    odt_kernels_init,
    odt_pair_counts,
    odt_popcount,
    odt_select,
)
from odtstudy.dl85.engine._objective cimport ysum
from odtstudy.dl85.engine._util cimport _alloc

odt_kernels_init()


def _select_kernels(int level):
    """Use this module's kernels for ``level`` (``_kernels_select``)."""
    return _kernels_select(level)


cdef inline double _quantile_row(const double* yb, const double* y, int j,
                                 uint64_t x, int r, double* below) noexcept nogil:
    """y of the row of the r-th (from 0) set bit of word j's bits x; adds
    the sum of y over the bits of x below it to ``below``."""
    cdef int pos = odt_select(x, r)
    cdef uint64_t low = x & (((<uint64_t>1) << pos) - 1)
    if low:
        below[0] += ysum(yb, j, low)
    return y[(j << 6) + pos]


cdef inline int _rank(double tau, int cnt) noexcept nogil:
    """Rank (from 1) of the tau-quantile row among ``cnt`` rows in target order."""
    cdef int k = <int>ceil(tau * cnt)
    return k if k >= 1 else 1


cdef inline int _rank_width(int W) noexcept nogil:
    """Entries per quantile of the rank table (``quantiles``): one per row
    count 0 .. 64 W of a cover of W words."""
    return (W << 6) + 1


cdef inline double _side_loss(int cnt, int k, double S, double q, double Sb,
                              double a, double c) noexcept nogil:
    """Pinball loss (slopes a above, c below) of ``cnt`` rows summing to S
    around their k-th row's y, q; the k - 1 rows below it sum to Sb."""
    if cnt <= 0:
        return 0.0
    return a * ((S - Sb) - q * (cnt - (k - 1))) + c * (q * (k - 1) - Sb)


ctypedef fused _stat:
    int32_t
    double


cdef inline _stat _quadrant(int q, _stat both, _stat fi, _stat fk,
                            _stat cover) noexcept nogil:
    """A statistic that adds up over rows (rows, sum of y) of quadrant q of
    a pair (i, k), 0 = i and k, 1 = i only, 2 = k only, 3 = neither, from
    its value on i AND k, on i, on k and on the cover."""
    if q == 0:
        return both
    if q == 1:
        return fi - both
    if q == 2:
        return fk - both
    return cover - fi - fk + both


cdef inline uint64_t _quadrant_bits(int q, uint64_t gi, uint64_t gk,
                                    uint64_t valid) noexcept nogil:
    if q == 0:
        return gi & gk
    if q == 1:
        return gi & ~gk
    if q == 2:
        return gk & ~gi
    return ~(gi | gk) & valid


cdef double _set_loss(const uint64_t* g, const int32_t* cp, const double* sp,
                      const double* cs, bint neg, int N, int nw, double tau,
                      double a, double c, const double* tab,
                      const double* oy) noexcept nogil:
    """Pinball loss of a packed set of rows as one leaf: the rows of words
    ``g`` (prefix counts ``cp``, prefix sums ``sp``), or with ``neg`` the
    cover's other rows (the cover's prefix sums ``cs``)."""
    cdef int cnt = (N - cp[nw]) if neg else cp[nw]
    cdef int k, j, before
    cdef double below, S, q
    cdef uint64_t x
    if cnt <= 0:
        return 0.0
    k = _rank(tau, cnt)
    S = (cs[nw] - sp[nw]) if neg else sp[nw]
    for j in range(nw):
        before = ((j << 6) - cp[j]) if neg else cp[j]
        if ((_imin((j + 1) << 6, N) - cp[j + 1]) if neg else cp[j + 1]) >= k:
            below = (cs[j] - sp[j]) if neg else sp[j]
            x = (~g[j] & _last_mask(N, j, nw)) if neg else g[j]
            q = _quantile_row(tab, oy, j, x, k - before - 1, &below)
            return _side_loss(cnt, k, S, q, below, a, c)
    return 0.0


cdef inline void _quadrant_losses(
        int x, int n, int N, int nw, int K, const int32_t* rank, int R,
        const double* a, const double* c, const uint64_t* gi, const uint64_t* gk,
        const int32_t* c11, const int32_t* cpi, const int32_t* cpk, const double* s11,
        const double* spi, const double* spk, const double* cs, const double* tab,
        const double* oy, double* lq) noexcept nogil:
    """The pinball losses of quadrant x (``n`` rows) of a pair at K
    quantiles into ``lq[4 j + x]`` (``rank[j * R]``: quantile j's rank among
    the ``n`` rows), each as ``_ranks_pairs`` computes it at one quantile,
    bit for bit. The ranks rise with j when the quantiles do, so one scan of
    the quadrant's words finds the quantile rows in turn: the last word
    whose words before it hold fewer rows than the rank."""
    cdef double sx = _quadrant(x, s11[nw], spi[nw], spk[nw], cs[nw]), sb = 0.0, qv = 0.0
    cdef int t = 0, j, kq, kp = 0
    for j in range(K):
        kq = rank[j * R]
        if kq == kp:
            # the previous quantile's row (few rows: ceil(tau n) repeats)
            lq[4 * j + x] = _side_loss(n, kq, sx, qv, sb, a[j], c[j])
            continue
        if kq < kp:
            t = 0     # the quantiles were not given in order
        kp = kq
        while t + 1 < nw and _quadrant(x, c11[t + 1], cpi[t + 1], cpk[t + 1],
                                       <int32_t>((t + 1) << 6)) < kq:
            t += 1
        sb = _quadrant(x, s11[t], spi[t], spk[t], cs[t])
        qv = _quantile_row(
            tab, oy, t, _quadrant_bits(x, gi[t], gk[t], _last_mask(N, t, nw)),
            kq - _quadrant(x, c11[t], cpi[t], cpk[t], <int32_t>_imin(t << 6, N)) - 1, &sb)
        lq[4 * j + x] = _side_loss(n, kq, sx, qv, sb, a[j], c[j])


cdef inline void _improve_branches(const bint* v, const double* lq, double* bl,
                                   double* br, int i, int k) noexcept nogil:
    """The four candidate branches of a pair (i, k) from its quadrant losses
    ``lq`` (0 = i and k, 1 = i only, 2 = k only, 3 = neither): each valid one
    (``v``) improves the best right / left branch of root i or k."""
    if v[0] and lq[0] + lq[1] < br[i]:
        br[i] = lq[0] + lq[1]
    if v[1] and lq[2] + lq[3] < bl[i]:
        bl[i] = lq[2] + lq[3]
    if v[2] and lq[0] + lq[2] < br[k]:
        br[k] = lq[0] + lq[2]
    if v[3] and lq[1] + lq[3] < bl[k]:
        bl[k] = lq[1] + lq[3]


cdef class Depth2Order(Depth2Counts):
    """The order-statistics solvers of the depth-2 search (base of
    ``_depth2.Depth2``)."""

    cdef double _depth1_order(self, int d, double leaf, int* out_f) noexcept nogil:
        """Best split of depth 1 for the absolute / pinball loss.

        The cover's rows are in target order (the caller sorts the rows by
        y), so for each feature two passes over them give both children's
        weights, their lower weighted tau-quantiles and the sums before
        them, hence both leaf losses, with no child cover, cache entry or
        leaf evaluation of its own.
        """
        cdef int n = self.objective.gather(self.cv.cov + d * self.W,
                                           self.cv.cidx + d * self.W, self.cv.cnnz[d])
        cdef int32_t* rows = self.objective.rows
        cdef double* w = self.objective.w
        cdef double* yv = self.objective.y
        cdef int f, i, r, b, ms = self.min_sup
        cdef int cnt[2]
        cdef double T[2]
        cdef double S[2]
        cdef double cw[2]
        cdef double cs[2]
        cdef double q[2]
        cdef double Wb[2]
        cdef double Sb[2]
        cdef bint found[2]
        cdef double tau = self.tau, a = self.above, c = self.below
        cdef double best = leaf, wr, yr, loss
        cdef uint64_t* col
        out_f[0] = FEATURE_LEAF
        for f in range(self.m):
            col = self.cv.cols + f * self.W
            cnt[0] = 0
            cnt[1] = 0
            T[0] = 0.0
            T[1] = 0.0
            S[0] = 0.0
            S[1] = 0.0
            for i in range(n):
                r = rows[i]
                b = <int>((col[r >> 6] >> (r & 63)) & 1)
                wr = w[r] if w != NULL else 1.0
                cnt[b] += 1
                T[b] += wr
                S[b] += wr * yv[r]
            if cnt[0] < ms or cnt[1] < ms:
                continue
            for b in range(2):
                cw[b] = 0.0
                cs[b] = 0.0
                found[b] = T[b] <= 0.0
                q[b] = 0.0
                Wb[b] = 0.0
                Sb[b] = 0.0
            for i in range(n):
                if found[0] and found[1]:
                    break
                r = rows[i]
                b = <int>((col[r >> 6] >> (r & 63)) & 1)
                if found[b]:
                    continue
                wr = w[r] if w != NULL else 1.0
                yr = yv[r]
                if cw[b] + wr >= tau * T[b] and wr > 0:
                    q[b] = yr
                    Wb[b] = cw[b]
                    Sb[b] = cs[b]
                    found[b] = True
                else:
                    cw[b] += wr
                    cs[b] += wr * yr
            loss = 0.0
            for b in range(2):
                if T[b] > 0.0:
                    # rows before the quantile row lie at or below it, the
                    # others at or above it (ties cost nothing either way)
                    loss += (a * ((S[b] - Sb[b]) - q[b] * (T[b] - Wb[b]))
                             + c * (q[b] * Wb[b] - Sb[b]))
            if loss < best:
                best = loss
                out_f[0] = f
        return best if best > self.eps else 0.0

    cdef double _depth1_ranks(self, int d, double leaf, int* out_f) noexcept nogil:
        """``_depth1_order`` for unit weights, over the cover's words.

        A side of a split holds ``cnt`` rows and its tau-quantile is its
        ``ceil(tau * cnt)``-th row in target order, which is row order: the
        counts are popcounts (a feature splitting the cover as one met before
        is skipped), and one pass over the words finds both sides'
        quantile rows and sums y (the side's, and below its quantile row)
        from the objective's byte tables (``_objective.ysum``), 8 lookups per
        word instead of one step per row.
        """
        cdef int W = self.W, nnz = self.cv.cnnz[d], j, f, b, ms = self.min_sup
        cdef uint64_t* cov = self.cv.cov + d * W
        cdef int32_t* ix = self.cv.cidx + d * W
        cdef const double* yb = self.objective.ybytes
        cdef uint64_t* col
        cdef uint64_t* g = self.gw
        cdef double* sc = self.wsum
        cdef uint64_t x[2]
        cdef int cnt[2]
        cdef int k[2]
        cdef int acc[2]
        cdef double Sb[2]
        cdef double q[2]
        cdef double sx[2]
        cdef int N = 0, pc
        cdef uint64_t h
        cdef double S = 0.0, S1, loss, best = leaf
        cdef double tau = self.tau, a = self.above, c = self.below
        out_f[0] = FEATURE_LEAF
        for j in range(nnz):
            N += odt_popcount(cov[j])
            sc[j] = ysum(yb, ix[j], cov[j])
            S += sc[j]
        self.cv.new_splits()
        for f in range(self.m):
            col = self.cv.cols + f * W
            h = self.cv.split_hash(d, f, &cnt[1])
            cnt[0] = N - cnt[1]
            if cnt[1] < ms or cnt[0] < ms or cnt[1] == 0 or cnt[0] == 0:
                continue
            if self.cv.seen_split(d, f, h):
                continue    # the same split as a feature evaluated before
            for j in range(nnz):
                g[j] = cov[j] & col[ix[j]]
            for b in range(2):
                k[b] = <int>ceil(tau * cnt[b])
                if k[b] < 1:
                    k[b] = 1
                acc[b] = 0
                Sb[b] = 0.0
                q[b] = 0.0
            S1 = 0.0
            for j in range(nnz):
                x[1] = g[j]
                x[0] = cov[j] & ~g[j]
                sx[1] = ysum(yb, ix[j], x[1]) if x[1] else 0.0
                sx[0] = sc[j] - sx[1]
                S1 += sx[1]
                for b in range(2):
                    if acc[b] >= k[b]:
                        continue    # quantile row found
                    pc = odt_popcount(x[b])
                    if acc[b] + pc < k[b]:
                        acc[b] += pc
                        Sb[b] += sx[b]
                    else:
                        q[b] = _quantile_row(yb, self.objective.y, ix[j], x[b],
                                             k[b] - acc[b] - 1, &Sb[b])
                        acc[b] = k[b]
            # rows below a side's quantile row lie at or below it, the others
            # at or above it (k - 1 rows below, summing to Sb)
            loss = (a * ((S1 - Sb[1]) - q[1] * (cnt[1] - (k[1] - 1)))
                    + c * (q[1] * (k[1] - 1) - Sb[1])
                    + a * (((S - S1) - Sb[0]) - q[0] * (cnt[0] - (k[0] - 1)))
                    + c * (q[0] * (k[0] - 1) - Sb[0]))
            if loss < best:
                best = loss
                out_f[0] = f
        return best if best > self.eps else 0.0

    cdef int _ranks_features(self, int d, int N, int nw) noexcept nogil:
        """``_d2_ranks``' set-up: the depth-d cover's N rows packed in target
        order (``oy``, its byte tables ``otab``, prefix sums ``ocov``), and
        the useful features (both sides >= min_sup, one of each split):
        their packed words ``gw``, prefix counts ``ocnt`` and sums ``opre``,
        row counts ``f0`` and the losses of their sides as leaves (``br`` /
        ``bl``). Returns how many (ids in ``fid``)."""
        cdef int W = self.W, nnz = self.cv.cnnz[d], j, b, f, t, nf = 0, ones
        cdef int ms = self.min_sup
        cdef uint64_t* w = self.cv.cov + d * W
        cdef int32_t* ix = self.cv.cidx + d * W
        cdef int32_t* rows = self.objective.rows
        cdef double* y = self.objective.y
        cdef double* oy = self.oy
        cdef double* tab
        cdef uint64_t* g
        cdef int32_t* cp
        cdef double* sp
        cdef double tau = self.tau, a = self.above, c = self.below
        cdef uint64_t h
        self.objective.gather(w, ix, nnz)
        for t in range(N):
            oy[t] = y[rows[t]]
        for t in range(N, nw << 6):
            oy[t] = 0.0
        for j in range(nw << 3):
            tab = self.otab + (j << 8)
            tab[0] = 0.0
            for b in range(1, 256):
                tab[b] = tab[b & (b - 1)] + oy[(j << 3) + odt_ctz(b)]
        self.ocov[0] = 0.0
        for j in range(nw):
            self.ocov[j + 1] = self.ocov[j] + ysum(self.otab, j, _last_mask(N, j, nw))
        self.cv.new_splits()
        for f in range(self.m):
            h = self.cv.split_hash(d, f, &ones)
            if ones < ms or N - ones < ms or self.cv.seen_split(d, f, h):
                continue
            g = self.gw + nf * nw
            if odt_compact != NULL:
                odt_compact(self.cv.cols + f * W, ix, w, nnz, g)
            else:
                _compact_soft(self.cv.cols + f * W, ix, w, nnz, g)
            cp = self.ocnt + nf * (nw + 1)
            sp = self.opre + nf * (nw + 1)
            cp[0] = 0
            sp[0] = 0.0
            for j in range(nw):
                cp[j + 1] = cp[j] + odt_popcount(g[j])
                sp[j + 1] = sp[j] + (ysum(self.otab, j, g[j]) if g[j] else 0.0)
            self.f0[nf] = ones
            self.br[nf] = _set_loss(g, cp, sp, self.ocov, False, N, nw, tau, a, c,
                                    self.otab, oy)
            self.bl[nf] = _set_loss(g, cp, sp, self.ocov, True, N, nw, tau, a, c,
                                    self.otab, oy)
            self.fid[nf] = f
            nf += 1
        self.d2_nnz = nw
        return nf

    cdef double _d2_ranks(self, int d, double leaf, int* out_f) noexcept nogil:
        """Exact best subtree of depth <= 2 for the absolute / pinball loss
        (unit weights), from the feature pairs.

        With the cover's rows packed in target order, a quadrant of a pair
        (i, k) holds ``n`` rows and its tau-quantile is its ``_rank``-th row.
        The pairs are ``_ranks_pairs``'; the best root is the one whose best
        left and right branches (``bl`` / ``br``) sum least.
        """
        cdef int nnz = self.cv.cnnz[d], j, i, nf, N = 0, nw
        cdef uint64_t* cov = self.cv.cov + d * self.W
        cdef double best, l
        cdef _Quantile one
        out_f[0] = FEATURE_LEAF
        for j in range(nnz):
            N += odt_popcount(cov[j])
        nw = (N + 63) >> 6
        nf = self._ranks_features(d, N, nw)
        if nf == 0:
            return leaf
        one.tau, one.a, one.c = self.tau, self.above, self.below
        self._ranks_pairs(N, nw, nf, one, self.bl, self.br)
        best = leaf
        for i in range(nf):
            l = self.bl[i] + self.br[i]
            if l < best:
                best = l
                out_f[0] = self.fid[i]
        return best if best > self.eps else 0.0

    cdef void _ranks_pairs(self, int N, int nw, int nf, _Taus q, double* bl,
                           double* br) noexcept nogil:
        """The feature pairs of ``_d2_ranks`` at one quantile or at K
        (``solve_quantiles``): the best branches of root i at quantile j
        improved in ``bl`` / ``br`` (at ``j * stride + i``).

        The counts of the pairs of root i come from the pair-count kernel;
        one pass over the words of i AND k (``odt_and_prefix``) gives its
        prefix counts and sums of y, and with those of i, k and the cover,
        every quadrant's (shared by the quantiles). Per quantile, a
        branch-free scan finds the word of each quadrant's quantile row (the
        words before it hold fewer than its rank of the quadrant's rows),
        which gives its y and the sum of y below it; the four quadrant
        losses are candidate branches of roots i and k (``v``: which
        branches have ``min_sup`` rows on both sides).

        The fused ``_Taus`` compiles one quantile apart, with the quadrant
        code inline: a loop over quantiles, or a call per pair, costs the
        single-quantile search 6 % of its instructions. At K quantiles a
        quadrant's losses come from ``_quadrant_losses``, one scan of its
        words for all its quantile rows (the family's pricing of osrt/yacht
        at depth 4: 22 % fewer instructions than a scan per quantile).
        """
        cdef int i, k, j, t, r0, x, ms = self.min_sup, ni, nk, nq
        cdef uint64_t* gw = self.gw
        cdef uint64_t* gi
        cdef uint64_t* gk
        cdef int32_t* ocnt = self.ocnt
        cdef double* opre = self.opre
        cdef int32_t* cpi
        cdef int32_t* cpk
        cdef double* spi
        cdef double* spk
        cdef int32_t* c11 = self.opc
        cdef double* s11 = self.ops
        cdef int32_t* cnt0 = self.cnt0
        cdef int32_t* f0 = self.f0
        cdef const double* cs = self.ocov
        cdef const double* tab = self.otab
        cdef const double* oy = self.oy
        cdef double tau, a, c
        cdef int n[4]
        cdef bint v[4]
        cdef int kq[4]
        cdef int wq[4]
        cdef double qv[4]
        cdef double sb[4]
        cdef double lq[4]
        if _Taus is _Quantile:
            nq = 1
        else:
            nq = q.K
        self._pairs_transpose(self.gw, self.d2_nnz, nf)
        for i in range(nf):
            gi = gw + i * nw
            cpi = ocnt + i * (nw + 1)
            spi = opre + i * (nw + 1)
            ni = f0[i]
            odt_pair_counts(self.gT, nf, nw, gi, gi, cnt0, self.cnt1, i + 1, nf)
            for k in range(i + 1, nf):
                nk = f0[k]
                n[0] = cnt0[k]                # i and k
                n[1] = ni - n[0]              # i, not k
                n[2] = nk - n[0]              # k, not i
                n[3] = N - ni - nk + n[0]     # neither
                v[0] = n[0] >= ms and n[1] >= ms     # right branch of i
                v[1] = n[2] >= ms and n[3] >= ms     # left branch of i
                v[2] = n[0] >= ms and n[2] >= ms     # right branch of k
                v[3] = n[1] >= ms and n[3] >= ms     # left branch of k
                if not (v[0] or v[1] or v[2] or v[3]):
                    continue
                gk = gw + k * nw
                cpk = ocnt + k * (nw + 1)
                spk = opre + k * (nw + 1)
                # prefix counts and sums of y of the rows of i AND k
                odt_and_prefix(oy, tab, gi, gk, nw, c11, s11)
                if _Taus is _Quantiles:
                    # quadrant by quadrant, each call compiled with its x; a
                    # quadrant no valid branch uses is skipped
                    if v[0] or v[2]:
                        _quadrant_losses(0, n[0], N, nw, nq, q.rank + n[0], q.R, q.a, q.c,
                                         gi, gk, c11, cpi, cpk, s11, spi, spk, cs, tab, oy,
                                         q.lq)
                    if v[0] or v[3]:
                        _quadrant_losses(1, n[1], N, nw, nq, q.rank + n[1], q.R, q.a, q.c,
                                         gi, gk, c11, cpi, cpk, s11, spi, spk, cs, tab, oy,
                                         q.lq)
                    if v[1] or v[2]:
                        _quadrant_losses(2, n[2], N, nw, nq, q.rank + n[2], q.R, q.a, q.c,
                                         gi, gk, c11, cpi, cpk, s11, spi, spk, cs, tab, oy,
                                         q.lq)
                    if v[1] or v[3]:
                        _quadrant_losses(3, n[3], N, nw, nq, q.rank + n[3], q.R, q.a, q.c,
                                         gi, gk, c11, cpi, cpk, s11, spi, spk, cs, tab, oy,
                                         q.lq)
                    for j in range(nq):
                        _improve_branches(v, q.lq + 4 * j, bl + j * q.stride,
                                          br + j * q.stride, i, k)
                else:
                    tau, a, c = q.tau, q.a, q.c
                    for x in range(4):
                        kq[x] = _rank(tau, n[x])
                        wq[x] = 0
                    for t in range(1, nw):
                        r0 = c11[t]
                        wq[0] += r0 < kq[0]
                        wq[1] += cpi[t] - r0 < kq[1]
                        wq[2] += cpk[t] - r0 < kq[2]
                        wq[3] += (t << 6) - cpi[t] - cpk[t] + r0 < kq[3]
                    for x in range(4):
                        qv[x] = 0.0
                        sb[x] = 0.0
                        if n[x] <= 0:
                            continue
                        t = wq[x]
                        sb[x] = _quadrant(x, s11[t], spi[t], spk[t], cs[t])
                        qv[x] = _quantile_row(
                            tab, oy, t, _quadrant_bits(x, gi[t], gk[t], _last_mask(N, t, nw)),
                            kq[x] - _quadrant(x, c11[t], cpi[t], cpk[t],
                                              <int32_t>_imin(t << 6, N)) - 1,
                            &sb[x])
                    for x in range(4):
                        lq[x] = _side_loss(n[x], kq[x],
                                           _quadrant(x, s11[nw], spi[nw], spk[nw], cs[nw]),
                                           qv[x], sb[x], a, c)
                    _improve_branches(v, lq, bl, br, i, k)

    cdef int quantiles(self, const double* taus, int K) except -1:
        """Prepare ``solve_quantiles`` for the pinball losses at ``taus[:K]``."""
        cdef int j, c, R = _rank_width(self.W)
        if self.oy == NULL or not self.pinball:
            raise ValueError("several quantiles need the pinball loss with unit weights")
        self.mK = K
        self.mtau = <double*>_alloc(K * sizeof(double))
        self.ma = <double*>_alloc(K * sizeof(double))
        self.mc = <double*>_alloc(K * sizeof(double))
        self.mbl = <double*>_alloc(K * (self.m + 1) * sizeof(double))
        self.mbr = <double*>_alloc(K * (self.m + 1) * sizeof(double))
        self.mrank = <int32_t*>_alloc(K * R * sizeof(int32_t))
        self.mlq = <double*>_alloc(4 * K * sizeof(double))
        for j in range(K):
            self.mtau[j] = taus[j]
            self.ma[j] = taus[j]
            self.mc[j] = 1.0 - taus[j]
            for c in range(R):
                self.mrank[j * R + c] = _rank(taus[j], c)
        return 0

    cdef bint solve_quantiles(self, int d, int r, int j0, const double* leaves,
                              const double* eps, double* out_err,
                              int* out_f) noexcept nogil:
        """``solve`` at the quantiles ``j0`` .. K - 1 of ``quantiles`` in one
        pass over the feature pairs (``_ranks_pairs``: the pair counts and the
        prefix sums of each pair are shared); ``leaves[j]`` the cover's loss
        as a leaf at quantile j, ``eps[j]`` its purity. Writes ``out_err[j]``
        / ``out_f[j]``; returns False (nothing written) when the cover is not
        a depth-2 order-statistics case."""
        cdef int nnz = self.cv.cnnz[d], j, i, nf, N = 0, nw, S = self.m + 1
        cdef uint64_t* cov = self.cv.cov + d * self.W
        cdef uint64_t* g
        cdef int32_t* cp
        cdef double* sp
        cdef double best, l
        cdef _Quantiles many
        if r < 2 or self.mK == 0:
            return False
        for j in range(nnz):
            N += odt_popcount(cov[j])
        nw = (N + 63) >> 6
        nf = self._ranks_features(d, N, nw)
        for j in range(j0, self.mK):
            for i in range(nf):
                g = self.gw + i * nw
                cp = self.ocnt + i * (nw + 1)
                sp = self.opre + i * (nw + 1)
                self.mbr[j * S + i] = _set_loss(g, cp, sp, self.ocov, False, N, nw,
                                                self.mtau[j], self.ma[j], self.mc[j],
                                                self.otab, self.oy)
                self.mbl[j * S + i] = _set_loss(g, cp, sp, self.ocov, True, N, nw,
                                                self.mtau[j], self.ma[j], self.mc[j],
                                                self.otab, self.oy)
        if nf > 0:
            many.tau, many.a, many.c = self.mtau + j0, self.ma + j0, self.mc + j0
            many.K, many.stride = self.mK - j0, S
            many.R = _rank_width(self.W)
            many.rank, many.lq = self.mrank + j0 * many.R, self.mlq
            self._ranks_pairs(N, nw, nf, many, self.mbl + j0 * S, self.mbr + j0 * S)
        for j in range(j0, self.mK):
            best = leaves[j]
            out_f[j] = FEATURE_LEAF
            out_err[j] = best
            if best <= eps[j]:
                continue    # a pure leaf
            for i in range(nf):
                l = self.mbl[j * S + i] + self.mbr[j * S + i]
                if l < best:
                    best = l
                    out_f[j] = self.fid[i]
            out_err[j] = best if best > eps[j] else 0.0
        return True
