// Per-element helpers: ELEMS int32 values per packet, one register array per element.
// ELEMS is one of 8, 16, 32, 64, 128, 256 (ina.p4src.protocol.ELEMS_CHOICES; 256 values are
// SwitchML's 1 KB packets). ELEMS_GROUP_g(M) applies the macro M to the indices of the g-th
// group of eight; ELEMS_BLOCK_b(M) to those of the b-th block of 64, beyond the first.
#if ELEMS != 8 && ELEMS != 16 && ELEMS != 32 && ELEMS != 64 && ELEMS != 128 && ELEMS != 256
#error "ELEMS must be one of 8, 16, 32, 64, 128, 256"
#endif
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
#if ELEMS > 64
#define ELEMS_BLOCK_1(M) \
    M(64) M(65) M(66) M(67) M(68) M(69) M(70) M(71) \
    M(72) M(73) M(74) M(75) M(76) M(77) M(78) M(79) \
    M(80) M(81) M(82) M(83) M(84) M(85) M(86) M(87) \
    M(88) M(89) M(90) M(91) M(92) M(93) M(94) M(95) \
    M(96) M(97) M(98) M(99) M(100) M(101) M(102) M(103) \
    M(104) M(105) M(106) M(107) M(108) M(109) M(110) M(111) \
    M(112) M(113) M(114) M(115) M(116) M(117) M(118) M(119) \
    M(120) M(121) M(122) M(123) M(124) M(125) M(126) M(127)
#else
#define ELEMS_BLOCK_1(M)
#endif
#if ELEMS > 128
#define ELEMS_BLOCK_2(M) \
    M(128) M(129) M(130) M(131) M(132) M(133) M(134) M(135) \
    M(136) M(137) M(138) M(139) M(140) M(141) M(142) M(143) \
    M(144) M(145) M(146) M(147) M(148) M(149) M(150) M(151) \
    M(152) M(153) M(154) M(155) M(156) M(157) M(158) M(159) \
    M(160) M(161) M(162) M(163) M(164) M(165) M(166) M(167) \
    M(168) M(169) M(170) M(171) M(172) M(173) M(174) M(175) \
    M(176) M(177) M(178) M(179) M(180) M(181) M(182) M(183) \
    M(184) M(185) M(186) M(187) M(188) M(189) M(190) M(191)
#define ELEMS_BLOCK_3(M) \
    M(192) M(193) M(194) M(195) M(196) M(197) M(198) M(199) \
    M(200) M(201) M(202) M(203) M(204) M(205) M(206) M(207) \
    M(208) M(209) M(210) M(211) M(212) M(213) M(214) M(215) \
    M(216) M(217) M(218) M(219) M(220) M(221) M(222) M(223) \
    M(224) M(225) M(226) M(227) M(228) M(229) M(230) M(231) \
    M(232) M(233) M(234) M(235) M(236) M(237) M(238) M(239) \
    M(240) M(241) M(242) M(243) M(244) M(245) M(246) M(247) \
    M(248) M(249) M(250) M(251) M(252) M(253) M(254) M(255)
#else
#define ELEMS_BLOCK_2(M)
#define ELEMS_BLOCK_3(M)
#endif
#define FOR_EACH_ELEM(M) ELEMS_GROUP_0(M) ELEMS_GROUP_1(M) ELEMS_GROUP_2(M) ELEMS_GROUP_3(M) \
    ELEMS_GROUP_4(M) ELEMS_GROUP_5(M) ELEMS_GROUP_6(M) ELEMS_GROUP_7(M) \
    ELEMS_BLOCK_1(M) ELEMS_BLOCK_2(M) ELEMS_BLOCK_3(M)

// Lanes: each 32-bit value word d_i carries 32 / LANE_BITS signed lanes (LANE_BITS = 32, 16 or 8,
// ina.p4src.protocol.LANE_BITS_CHOICES), the first lane in its top bits, so the payload is
// ELEMS * 32 / LANE_BITS big-endian two's complement values. 32-bit lanes add with int32
// wraparound, as before lanes existed; a narrower lane saturates at its range and the slot is
// marked overflowed (the RESULT's flag OVERFLOW), never wrapped. The header's flags carry the
// width in LANE_MASK (0 for 32 bits); an UPDATE of another width is malformed.
#ifndef LANE_BITS
#define LANE_BITS 32
#endif
#if LANE_BITS == 32
#define LANE_CODE 0
#elif LANE_BITS == 16
#define LANE_CODE 1
#define LANE_SIGNS 32w0x80008000
#elif LANE_BITS == 8
#define LANE_CODE 2
#define LANE_SIGNS 32w0x80808080
#else
#error "LANE_BITS must be one of 32, 16, 8"
#endif
const bit<8> FLAG_OVERFLOW = 0x01;  // a RESULT whose sum saturated a lane (an UPDATE's: its sum did)
const bit<8> LANE_MASK = 0xF0;      // the flags' lane width code: 0 = 32, 1 = 16, 2 = 8 bits
const bit<8> LANE_FLAGS = LANE_CODE << 4;

#if LANE_BITS == 32
#define LANE_SUM(a, b) ((a) + (b))
#else
#define LANE_SUM(a, b) add_lanes(a, b, meta.lane_overflow)
// The lane-wise sum of two words of signed lanes, each saturated at its lane's range. `overflowed`
// gains the sign bit of every lane that saturated. Branch-free: the lanes' sign bits (LANE_SIGNS)
// are masked off so no carry crosses a lane, then added back as each lane's own sign.
bit<32> add_lanes(in bit<32> a, in bit<32> b, inout bit<32> overflowed) {
    bit<32> sum = ((a & ~LANE_SIGNS) + (b & ~LANE_SIGNS)) ^ ((a ^ b) & LANE_SIGNS);
    bit<32> over = ~(a ^ b) & (a ^ sum) & LANE_SIGNS;  // both signs alike, the sum's not
    bit<32> lanes = over | (over - (over >> (LANE_BITS - 1)));  // every bit of those lanes
    bit<32> positive = ~a & LANE_SIGNS;  // the sign bit of each lane that overflowed upward
    bit<32> limit = (a & LANE_SIGNS) | (positive - (positive >> (LANE_BITS - 1)));
    overflowed = overflowed | over;
    return (sum & ~lanes) | (limit & lanes);
}
#endif
