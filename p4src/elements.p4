// Per-element helpers: ELEMS int32 values per packet, one register array per element.
// ELEMS_GROUP_g(M) applies the macro M to the indices of the g-th group of eight.
#define ELEMS_GROUP_0(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#if ELEMS > 8
#define ELEMS_GROUP_1(M) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)
#else
#define ELEMS_GROUP_1(M)
#endif
#if ELEMS > 16
#define ELEMS_GROUP_2(M) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23)
#else
#define ELEMS_GROUP_2(M)
#endif
#if ELEMS > 24
#define ELEMS_GROUP_3(M) M(24) M(25) M(26) M(27) M(28) M(29) M(30) M(31)
#else
#define ELEMS_GROUP_3(M)
#endif
#if ELEMS > 32
#define ELEMS_GROUP_4(M) M(32) M(33) M(34) M(35) M(36) M(37) M(38) M(39)
#else
#define ELEMS_GROUP_4(M)
#endif
#if ELEMS > 40
#define ELEMS_GROUP_5(M) M(40) M(41) M(42) M(43) M(44) M(45) M(46) M(47)
#else
#define ELEMS_GROUP_5(M)
#endif
#if ELEMS > 48
#define ELEMS_GROUP_6(M) M(48) M(49) M(50) M(51) M(52) M(53) M(54) M(55)
#else
#define ELEMS_GROUP_6(M)
#endif
#if ELEMS > 56
#define ELEMS_GROUP_7(M) M(56) M(57) M(58) M(59) M(60) M(61) M(62) M(63)
#else
#define ELEMS_GROUP_7(M)
#endif
#define FOR_EACH_ELEM(M) ELEMS_GROUP_0(M) ELEMS_GROUP_1(M) ELEMS_GROUP_2(M) ELEMS_GROUP_3(M) ELEMS_GROUP_4(M) ELEMS_GROUP_5(M) ELEMS_GROUP_6(M) ELEMS_GROUP_7(M)
