/* The naive baseline of bench/test_bench_naive.py: Baby Tetris solved by a
 * plain C program, one core, as a student would write it.  Breadth-first
 * search over the boards (a bitmap over every board and a sorted list), a
 * move table (each move's next board found by binary search), then
 * synchronous (Jacobi) value iteration over (board, piece) states until no
 * value changes by more than tol.  Same rules as babytris's default: trominoes I and L
 * (probability 1/2 each), hard drop from above, rows cleared for 0/1/3/6 points.
 *
 * Usage: naive_vi WIDTH HEIGHT DISCOUNT TOL
 * Prints: boards sweeps start_value seconds
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t board;
static int W, H;
static board FULL;
/* placements: mask at row 0, rows spanned, piece */
static board pmask[64];
static int prows[64], ppiece[64], nplace;

static void add_shape(const int cells[][2], int n, int piece) {
    /* all 4 rotations, deduplicated after normalising */
    int c[4][2], r, i, j, k;
    board seen[4];
    int nseen = 0;
    memcpy(c, cells, sizeof(int) * 2 * n);
    for (r = 0; r < 4; r++) {
        int minx = 99, miny = 99, maxx = -1, maxy = -1;
        for (i = 0; i < n; i++) {
            if (c[i][0] < minx) minx = c[i][0];
            if (c[i][1] < miny) miny = c[i][1];
        }
        board m = 0;
        for (i = 0; i < n; i++) {
            int x = c[i][0] - minx, y = c[i][1] - miny;
            if (x > maxx) maxx = x;
            if (y > maxy) maxy = y;
            m |= (board)1 << (y * W + x);
        }
        int dup = 0;
        for (k = 0; k < nseen; k++) dup |= seen[k] == m;
        if (!dup) {
            seen[nseen++] = m;
            for (j = 0; j + maxx < W; j++) {
                if (maxy + 1 > H) continue;
                pmask[nplace] = m << j;
                prows[nplace] = maxy + 1;
                ppiece[nplace] = piece;
                nplace++;
            }
        }
        for (i = 0; i < n; i++) { /* rotate 90 degrees: (x, y) -> (y, -x) */
            int x = c[i][0];
            c[i][0] = c[i][1];
            c[i][1] = -x;
        }
    }
}

static int drop(board b, int k, board *after, int *lines) {
    board sm = b;
    int s, y, r, n = 0;
    for (s = W; s < W * H; s <<= 1) sm |= sm >> s;
    y = H - prows[k];
    if ((pmask[k] << (y * W)) & sm) return 0;
    while (y > 0 && !((pmask[k] << ((y - 1) * W)) & sm)) y--;
    b |= pmask[k] << (y * W);
    for (r = y + prows[k] - 1; r >= y; r--) {
        board full = FULL << (r * W);
        if ((b & full) == full) {
            board low = b & ((((board)1) << (r * W)) - 1);
            board high = (r + 1) * W < 64 ? (b >> ((r + 1) * W)) << (r * W) : 0;
            b = low | high;
            n++;
        }
    }
    *after = b;
    *lines = n;
    return 1;
}

static board *boards;
static long nboards;

static long find(board b) {
    long lo = 0, hi = nboards - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (boards[mid] == b) return mid;
        if (boards[mid] < b) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

static int cmp(const void *a, const void *b) {
    board x = *(const board *)a, y = *(const board *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: naive_vi WIDTH HEIGHT DISCOUNT TOL\n"); return 2; }
    W = atoi(argv[1]); H = atoi(argv[2]);
    double g = atof(argv[3]), tol = atof(argv[4]);
    if (W * H > 30) { fprintf(stderr, "at most 30 cells\n"); return 2; }
    FULL = (((board)1) << W) - 1;
    static const int I[3][2] = {{0, 0}, {1, 0}, {2, 0}};
    static const int L[3][2] = {{0, 0}, {1, 0}, {0, 1}};
    add_shape(I, 3, 0);
    add_shape(L, 3, 1);
    const double score[4] = {0, 1, 3, 6};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);

    size_t nbits = (size_t)1 << (W * H);
    uint8_t *seen = calloc(nbits / 8 + 1, 1);
    board *queue = malloc(sizeof(board) * (nbits < 50000000 ? nbits : 50000000));
    long head = 0, tail = 0;
    queue[tail++] = 0;
    seen[0] = 1;
    while (head < tail) {
        board b = queue[head++], nb;
        int k, lines;
        for (k = 0; k < nplace; k++)
            if (drop(b, k, &nb, &lines) && !(seen[nb >> 3] & (1 << (nb & 7)))) {
                seen[nb >> 3] |= 1 << (nb & 7);
                queue[tail++] = nb;
            }
    }
    nboards = tail;
    boards = queue;
    qsort(boards, nboards, sizeof(board), cmp);

    /* The move table, once: for each state its moves' next board and points. */
    long *first = malloc(sizeof(long) * (nboards * 2 + 1));
    long nmoves = 0, cap = nboards * 8;
    int32_t *next = malloc(sizeof(int32_t) * cap);
    double *points = malloc(sizeof(double) * cap);
    for (long i = 0; i < nboards; i++)
        for (int p = 0; p < 2; p++) {
            first[2 * i + p] = nmoves;
            for (int k = 0; k < nplace; k++) {
                board nb;
                int lines;
                if (ppiece[k] != p || !drop(boards[i], k, &nb, &lines)) continue;
                if (nmoves == cap) {
                    cap *= 2;
                    next = realloc(next, sizeof(int32_t) * cap);
                    points = realloc(points, sizeof(double) * cap);
                }
                next[nmoves] = (int32_t)find(nb);
                points[nmoves] = score[lines];
                nmoves++;
            }
        }
    first[nboards * 2] = nmoves;

    double *V = calloc(nboards * 2, sizeof(double)), *Vn = calloc(nboards * 2, sizeof(double));
    int sweeps = 0;
    double residual = 1e300;
    while (residual > tol) {
        residual = 0;
        for (long s = 0; s < nboards * 2; s++) {
            double best = 0;
            for (long e = first[s]; e < first[s + 1]; e++) {
                long j = next[e];
                double q = points[e] + g * 0.5 * (V[2 * j] + V[2 * j + 1]);
                if (e == first[s] || q > best) best = q;
            }
            double d = best - V[s];
            if (d < 0) d = -d;
            if (d > residual) residual = d;
            Vn[s] = best;
        }
        double *t = V; V = Vn; Vn = t;
        sweeps++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    printf("%ld %d %.10f %.6f\n", nboards, sweeps, 0.5 * (V[0] + V[1]), seconds);
    return 0;
}
