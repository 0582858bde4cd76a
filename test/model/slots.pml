/* The nonce-slot protocol of issue 35, checked exhaustively by SPIN (test/model/check.mjs runs it; docs/testing.md,
   "The model check", says what it shows and what it leaves out).

   One wallet, nonces 0..L-1. Two payment intents (an operation stage's calls); each owns one slot (a nonce) at a time
   and may be signed anew at a new nonce at most R times. A slot holds its versions: the original and a fee bump, both
   at its nonce, both includable, and only one can be mined there. Every signed version stays includable for ever (a
   lagging node's pool), even once its slot was given up. Software outside loopsign may use any nonce (foreign). The
   chain is seen per nonce: chain[n] is what the canonical chain carries at nonce n, for n < top (the head's nonce
   count); the first fin of them are finalized. The world includes, takes the unfinalized head back (a reorg; a deeper
   one is a sequence of these) and advances finality, in any order and at any moment.

   The executor (one process: the wallet claim excludes a second) signs each intent at a nonce allocated locally,
   max(the node's pending count, 1 + the highest journaled slot), where the node's count may be anything (lagging,
   lying); fee-bumps; and gives a slot up (void) to sign the intent's calls at a new nonce, by one of two rules:
     RULE_HEAD  (today's drop): once another transaction has the slot's nonce at the head (one confirmation).
     RULE_FINAL (issue 35): once the finalized nonce count is past the slot's nonce and, read after that count, no
                version of the slot has a receipt.
   Every journal write is one atomic step; reads happen one at a time, the world moving in between. A crash loses only
   what was read and not yet written: the executor abandons the step and starts another.

   The property: on the canonical chain, at the head and on its finalized prefix, each intent is carried at most once.

   Variants of RULE_FINAL, to show what each part of the rule is for (each fails, but HIDING_NODE with SEEN_GUARD):
     RECEIPTS_FIRST  the receipts are read before the finalized count
     NEWEST_ONLY     only the newest version's receipt is read
     REACH           asserts that no intent is ever paid through a slot signed anew: it fails if and only if the
                     rule lets calls move to a new nonce and pay there, so RULE_FINAL's proof is not vacuous
     HIDING_NODE     a node may deny the receipt of a version the journal saw mined (the run that waits on a receipt
                     records it); with SEEN_GUARD, a slot the journal saw mined is never given up: it holds again */

#ifndef L
#define L 6
#endif
#ifndef R
#define R 2
#endif
#define I 2             /* intents */
#define K (R + 1)       /* slots per intent: intent i's k-th slot is i*K + k */
#define S (I * K)
#define FOREIGN 1       /* chain codes: 0 nothing, 1 foreign, 2 + 2*slot + version */
#define CODE(s, v) (2 + 2 * (s) + (v))
#define SLOT_OF(c) (((c) - 2) / 2)
#define VERSION_OF(c) (((c) - 2) % 2)

#if !defined(RULE_HEAD) && !defined(RULE_FINAL)
#error "compile with -DRULE_HEAD or -DRULE_FINAL"
#endif

/* The chain. */
byte chain[L];
byte top;               /* the head's nonce count */
byte fin;               /* the finalized nonce count, fin <= top */

/* The journal. */
byte owner[L];          /* 1 + the slot that owns nonce n, or 0 */
byte nonce[S];          /* a slot's nonce, once signed */
byte nver[S];           /* versions signed: 1 (the original) or 2 (and a fee bump) */
bit  vd[S];             /* the slot was given up: its intent's calls may be signed at a new nonce */
byte ns[I];             /* slots an intent has had */
byte next;              /* 1 + the highest journaled slot: the allocation floor */
#ifdef HIDING_NODE
bit  seen[I];           /* the journal saw a version of the intent's current slot mined */
#endif

/* Scratch for atomic steps, kept out of the state vector. */
hidden byte x_i, x_k, x_head, x_fin, x_nonce;

/* Each intent on the head, and on its finalized prefix, at most once. */
inline check() {
  x_i = 0;
  do
  :: x_i < I ->
     x_head = 0; x_fin = 0; x_k = 0;
     do
     :: x_k < top ->
        if
        :: chain[x_k] >= 2 && SLOT_OF(chain[x_k]) / K == x_i ->
           x_head++;
           if :: x_k < fin -> x_fin++ :: else -> skip fi
        :: else -> skip
        fi;
        x_k++
     :: else -> break
     od;
     if :: x_head > 1 -> printf("MSC: intent %d is carried %d times by the head\n", x_i, x_head) :: else -> skip fi;
     assert(x_head <= 1 && x_fin <= 1);
#ifdef REACH
     x_k = 0;
     do
     :: x_k < top -> assert(!(chain[x_k] >= 2 && SLOT_OF(chain[x_k]) / K == x_i && SLOT_OF(chain[x_k]) % K > 0)); x_k++
     :: else -> break
     od;
#endif
     x_i++
  :: else -> break
  od;
  x_i = 0; x_k = 0; x_head = 0; x_fin = 0
}

/* The intent's next slot, at max(the node's pending count, whatever it says, and 1 + the highest journaled slot). Out
   of nonces at these bounds, nothing is signed. */
inline sign(i) {
  x_nonce = 0;
  do
  :: x_nonce < L - 1 -> x_nonce++
  :: break
  od;
  if :: x_nonce < next -> x_nonce = next :: else -> skip fi;
  if
  :: x_nonce < L ->
     x_i = i * K + ns[i];
     nonce[x_i] = x_nonce; owner[x_nonce] = x_i + 1; nver[x_i] = 1; ns[i]++; next = x_nonce + 1;
     printf("MSC: sign intent %d's calls in slot %d at nonce %d\n", i, x_i, x_nonce)
  :: else -> skip
  fi;
  x_nonce = 0; x_i = 0
}

active proctype world() {
end:                     /* nothing left to do is a valid end, for the world and for the executor */
  do
  :: atomic {            /* include, at the next nonce, a foreign transaction or any version signed for it */
       top < L ->
       if
       :: chain[top] = FOREIGN
       :: owner[top] > 0 -> chain[top] = CODE(owner[top] - 1, 0)
       :: owner[top] > 0 && nver[owner[top] - 1] == 2 -> chain[top] = CODE(owner[top] - 1, 1)
       fi;
       if
       :: chain[top] == FOREIGN -> printf("MSC: the head includes a foreign transaction at nonce %d\n", top)
       :: else ->
          printf("MSC: the head includes slot %d (intent %d) version %d at nonce %d\n",
                 SLOT_OF(chain[top]), SLOT_OF(chain[top]) / K, VERSION_OF(chain[top]), top)
       fi;
       top++;
       check()
     }
  :: atomic { fin < top -> fin++; printf("MSC: nonce %d is final\n", fin - 1) }
  :: atomic { top > fin -> top--; chain[top] = 0; printf("MSC: a reorg takes nonce %d off the head\n", top) }
  od
}

/* The intent's current slot; whether a version of slot s is on the head (its receipt); an intent's current slot is
   not given up. */
#define CUR(i) ((i) * K + ns[i] - 1)
#define MINED(s) (nonce[s] < top && chain[nonce[s]] >= 2 && SLOT_OF(chain[nonce[s]]) == (s))
#define OPEN(i) (ns[i] > 0 && !vd[CUR(i)])
#ifdef SEEN_GUARD
#define MAY_GIVE_UP(i) (!seen[i])   /* a slot the journal saw mined is never given up on a node's word */
#else
#define MAY_GIVE_UP(i) 1
#endif

active proctype executor() {
  byte i, s, n, f;
  bit r;
end:
  do
  :: atomic { ns[0] == 0 -> sign(0) }
  :: atomic { ns[1] == 0 -> sign(1) }
  :: atomic { OPEN(0) && nver[CUR(0)] == 1 -> nver[CUR(0)] = 2; printf("MSC: fee bump of slot %d\n", CUR(0)) }
  :: atomic { OPEN(1) && nver[CUR(1)] == 1 -> nver[CUR(1)] = 2; printf("MSC: fee bump of slot %d\n", CUR(1)) }
#ifdef HIDING_NODE
  /* The run that waits on a receipt records the slot mined. */
  :: atomic { OPEN(0) && !seen[0] && MINED(CUR(0)) -> seen[0] = 1; printf("MSC: the journal sees slot %d mined\n", CUR(0)) }
  :: atomic { OPEN(1) && !seen[1] && MINED(CUR(1)) -> seen[1] = 1; printf("MSC: the journal sees slot %d mined\n", CUR(1)) }
#endif
#ifdef RULE_HEAD
  /* Another transaction has the nonce at the head: drop the slot and sign its calls anew. */
  :: atomic {
       OPEN(0) && ns[0] < K && nonce[CUR(0)] < top && !MINED(CUR(0)) ->
       printf("MSC: slot %d's nonce is taken at the head: drop it\n", CUR(0)); vd[CUR(0)] = 1; sign(0)
     }
  :: atomic {
       OPEN(1) && ns[1] < K && nonce[CUR(1)] < top && !MINED(CUR(1)) ->
       printf("MSC: slot %d's nonce is taken at the head: drop it\n", CUR(1)); vd[CUR(1)] = 1; sign(1)
     }
#else
  :: if
     :: atomic { OPEN(0) && ns[0] < K -> i = 0; s = CUR(0); n = nonce[s] }
     :: atomic { OPEN(1) && ns[1] < K -> i = 1; s = CUR(1); n = nonce[s] }
     fi;
#ifdef RECEIPTS_FIRST
     goto receipts;
finalized:
     atomic { f = fin; printf("MSC: read: the finalized count is %d\n", f) }
     goto decide;
#endif
     atomic { f = fin; printf("MSC: read: the finalized count is %d\n", f) }
receipts:                /* a receipt, at the head, for every version of the slot (or only the newest) */
     atomic {
#ifdef NEWEST_ONLY
       r = (n < top && chain[n] == CODE(s, nver[s] - 1));
#else
       r = (n < top && chain[n] >= 2 && SLOT_OF(chain[n]) == s);
#endif
#ifdef HIDING_NODE
       if :: seen[i] -> r = 0 :: true -> skip fi;   /* a node may deny a receipt the journal saw */
#endif
       printf("MSC: read: slot %d (nonce %d) has a receipt: %d\n", s, n, r)
     }
#ifdef RECEIPTS_FIRST
     goto finalized;
decide:
#endif
     atomic {            /* write: give the slot up and sign its calls at a new nonce; or a crash loses the reads */
       if
       :: f > n && !r && MAY_GIVE_UP(i) ->
          printf("MSC: slot %d is void: give it up\n", s);
          vd[s] = 1;
#ifdef HIDING_NODE
          seen[i] = 0;
#endif
          sign(i)
       :: true -> skip
       fi;
       i = 0; s = 0; n = 0; f = 0; r = 0
     }
#endif
  od
}
