// golden test header
//
// CRC32C: polynomial 1edc6f41, init ffffffff, reflected in and out, xor out ffffffff; 4-byte beats.
// Byte 0 (data_i[7:0]) goes first. keep_i must be a contiguous run of ones from bit 0;
// any other keep_i adds no data. start_i restarts from the initial value before this
// cycle's beat. crc_o is the finished CRC of all bytes since the start, from the register:
// it includes a beat from the next cycle on.

module crc32c_d32 (
  input  logic        clk_i,
  input  logic        rst_ni,

  // beats
  input  logic        start_i, // restart from the initial value before this beat
  input  logic        valid_i,
  input  logic [31:0] data_i,
  input  logic [3:0]  keep_i,  // contiguous from bit 0; other patterns add no data

  // result
  output logic [31:0] crc_o    // CRC of every byte since the start, up to the last cycle's beat
);

  logic [31:0] crc_q;         // running value, in crc_o's bit order, before xor out
  logic [31:0] crc_d;
  logic [31:0] crc_seed;      // the value this cycle's bytes are added to
  logic        crc_bytes1_0;
  logic        crc_bytes1_1;
  logic        crc_bytes1_2;
  logic        crc_bytes1_3;
  logic        crc_bytes1_4;
  logic        crc_bytes1_5;
  logic        crc_bytes1_6;
  logic        crc_bytes1_7;
  logic        crc_bytes1_8;
  logic        crc_bytes1_9;
  logic        crc_bytes1_10;
  logic        crc_bytes1_11;
  logic        crc_bytes1_12;
  logic        crc_bytes1_13;
  logic        crc_bytes1_14;
  logic        crc_bytes1_15;
  logic        crc_bytes1_16;
  logic        crc_bytes1_17;
  logic        crc_bytes1_18;
  logic        crc_bytes1_19;
  logic        crc_bytes1_20;
  logic        crc_bytes1_21;
  logic        crc_bytes1_22;
  logic        crc_bytes1_23;
  logic        crc_bytes1_24;
  logic        crc_bytes1_25;
  logic        crc_bytes1_26;
  logic        crc_bytes1_27;
  logic        crc_bytes1_28;
  logic        crc_bytes1_29;
  logic        crc_bytes1_30;
  logic        crc_bytes1_31;
  logic [31:0] crc_bytes1;    // after the beat's first 1 byte
  logic        crc_bytes2_0;
  logic        crc_bytes2_1;
  logic        crc_bytes2_2;
  logic        crc_bytes2_3;
  logic        crc_bytes2_4;
  logic        crc_bytes2_5;
  logic        crc_bytes2_6;
  logic        crc_bytes2_7;
  logic        crc_bytes2_8;
  logic        crc_bytes2_9;
  logic        crc_bytes2_10;
  logic        crc_bytes2_11;
  logic        crc_bytes2_12;
  logic        crc_bytes2_13;
  logic        crc_bytes2_14;
  logic        crc_bytes2_15;
  logic        crc_bytes2_16;
  logic        crc_bytes2_17;
  logic        crc_bytes2_18;
  logic        crc_bytes2_19;
  logic        crc_bytes2_20;
  logic        crc_bytes2_21;
  logic        crc_bytes2_22;
  logic        crc_bytes2_23;
  logic        crc_bytes2_24;
  logic        crc_bytes2_25;
  logic        crc_bytes2_26;
  logic        crc_bytes2_27;
  logic        crc_bytes2_28;
  logic        crc_bytes2_29;
  logic        crc_bytes2_30;
  logic        crc_bytes2_31;
  logic [31:0] crc_bytes2;    // after the beat's first 2 bytes
  logic        crc_bytes3_0;
  logic        crc_bytes3_1;
  logic        crc_bytes3_2;
  logic        crc_bytes3_3;
  logic        crc_bytes3_4;
  logic        crc_bytes3_5;
  logic        crc_bytes3_6;
  logic        crc_bytes3_7;
  logic        crc_bytes3_8;
  logic        crc_bytes3_9;
  logic        crc_bytes3_10;
  logic        crc_bytes3_11;
  logic        crc_bytes3_12;
  logic        crc_bytes3_13;
  logic        crc_bytes3_14;
  logic        crc_bytes3_15;
  logic        crc_bytes3_16;
  logic        crc_bytes3_17;
  logic        crc_bytes3_18;
  logic        crc_bytes3_19;
  logic        crc_bytes3_20;
  logic        crc_bytes3_21;
  logic        crc_bytes3_22;
  logic        crc_bytes3_23;
  logic        crc_bytes3_24;
  logic        crc_bytes3_25;
  logic        crc_bytes3_26;
  logic        crc_bytes3_27;
  logic        crc_bytes3_28;
  logic        crc_bytes3_29;
  logic        crc_bytes3_30;
  logic        crc_bytes3_31;
  logic [31:0] crc_bytes3;    // after the beat's first 3 bytes
  logic        crc_bytes4_0;
  logic        crc_bytes4_1;
  logic        crc_bytes4_2;
  logic        crc_bytes4_3;
  logic        crc_bytes4_4;
  logic        crc_bytes4_5;
  logic        crc_bytes4_6;
  logic        crc_bytes4_7;
  logic        crc_bytes4_8;
  logic        crc_bytes4_9;
  logic        crc_bytes4_10;
  logic        crc_bytes4_11;
  logic        crc_bytes4_12;
  logic        crc_bytes4_13;
  logic        crc_bytes4_14;
  logic        crc_bytes4_15;
  logic        crc_bytes4_16;
  logic        crc_bytes4_17;
  logic        crc_bytes4_18;
  logic        crc_bytes4_19;
  logic        crc_bytes4_20;
  logic        crc_bytes4_21;
  logic        crc_bytes4_22;
  logic        crc_bytes4_23;
  logic        crc_bytes4_24;
  logic        crc_bytes4_25;
  logic        crc_bytes4_26;
  logic        crc_bytes4_27;
  logic        crc_bytes4_28;
  logic        crc_bytes4_29;
  logic        crc_bytes4_30;
  logic        crc_bytes4_31;
  logic [31:0] crc_bytes4;    // after the beat's first 4 bytes

  assign crc_seed = start_i ? 32'hffffffff : crc_q;
  assign crc_bytes1_0 = ^{crc_seed & 32'h11f, data_i[7:0] & 8'h1f};
  assign crc_bytes1_1 = ^{crc_seed & 32'h23f, data_i[7:0] & 8'h3f};
  assign crc_bytes1_2 = ^{crc_seed & 32'h47e, data_i[7:0] & 8'h7e};
  assign crc_bytes1_3 = ^{crc_seed & 32'h8fc, data_i[7:0] & 8'hfc};
  assign crc_bytes1_4 = ^{crc_seed & 32'h10e6, data_i[7:0] & 8'he6};
  assign crc_bytes1_5 = ^{crc_seed & 32'h20d2, data_i[7:0] & 8'hd2};
  assign crc_bytes1_6 = ^{crc_seed & 32'h40ba, data_i[7:0] & 8'hba};
  assign crc_bytes1_7 = ^{crc_seed & 32'h806a, data_i[7:0] & 8'h6a};
  assign crc_bytes1_8 = ^{crc_seed & 32'h100d5, data_i[7:0] & 8'hd5};
  assign crc_bytes1_9 = ^{crc_seed & 32'h200b5, data_i[7:0] & 8'hb5};
  assign crc_bytes1_10 = ^{crc_seed & 32'h40074, data_i[7:0] & 8'h74};
  assign crc_bytes1_11 = ^{crc_seed & 32'h800e8, data_i[7:0] & 8'he8};
  assign crc_bytes1_12 = ^{crc_seed & 32'h1000ce, data_i[7:0] & 8'hce};
  assign crc_bytes1_13 = ^{crc_seed & 32'h200082, data_i[7:0] & 8'h82};
  assign crc_bytes1_14 = ^{crc_seed & 32'h40001a, data_i[7:0] & 8'h1a};
  assign crc_bytes1_15 = ^{crc_seed & 32'h800035, data_i[7:0] & 8'h35};
  assign crc_bytes1_16 = ^{crc_seed & 32'h100006b, data_i[7:0] & 8'h6b};
  assign crc_bytes1_17 = ^{crc_seed & 32'h20000d7, data_i[7:0] & 8'hd7};
  assign crc_bytes1_18 = ^{crc_seed & 32'h40000b0, data_i[7:0] & 8'hb0};
  assign crc_bytes1_19 = ^{crc_seed & 32'h800007f, data_i[7:0] & 8'h7f};
  assign crc_bytes1_20 = ^{crc_seed & 32'h100000fe, data_i[7:0] & 8'hfe};
  assign crc_bytes1_21 = ^{crc_seed & 32'h200000e3, data_i[7:0] & 8'he3};
  assign crc_bytes1_22 = ^{crc_seed & 32'h400000d9, data_i[7:0] & 8'hd9};
  assign crc_bytes1_23 = ^{crc_seed & 32'h800000ac, data_i[7:0] & 8'hac};
  assign crc_bytes1_24 = ^{crc_seed & 32'h46, data_i[7:0] & 8'h46};
  assign crc_bytes1_25 = ^{crc_seed & 32'h8d, data_i[7:0] & 8'h8d};
  assign crc_bytes1_26 = ^{crc_seed[2], data_i[2]};
  assign crc_bytes1_27 = ^{crc_seed[3], data_i[3]};
  assign crc_bytes1_28 = ^{crc_seed & 32'h11, data_i[7:0] & 8'h11};
  assign crc_bytes1_29 = ^{crc_seed & 32'h23, data_i[7:0] & 8'h23};
  assign crc_bytes1_30 = ^{crc_seed & 32'h47, data_i[7:0] & 8'h47};
  assign crc_bytes1_31 = ^{crc_seed & 32'h8f, data_i[7:0] & 8'h8f};
  assign crc_bytes1 = {crc_bytes1_31, crc_bytes1_30, crc_bytes1_29, crc_bytes1_28, crc_bytes1_27, crc_bytes1_26, crc_bytes1_25, crc_bytes1_24, crc_bytes1_23, crc_bytes1_22, crc_bytes1_21, crc_bytes1_20, crc_bytes1_19, crc_bytes1_18, crc_bytes1_17, crc_bytes1_16, crc_bytes1_15, crc_bytes1_14, crc_bytes1_13, crc_bytes1_12, crc_bytes1_11, crc_bytes1_10, crc_bytes1_9, crc_bytes1_8, crc_bytes1_7, crc_bytes1_6, crc_bytes1_5, crc_bytes1_4, crc_bytes1_3, crc_bytes1_2, crc_bytes1_1, crc_bytes1_0};
  assign crc_bytes2_0 = ^{crc_seed & 32'h11f91, data_i[15:0] & 16'h1f91};
  assign crc_bytes2_1 = ^{crc_seed & 32'h23f23, data_i[15:0] & 16'h3f23};
  assign crc_bytes2_2 = ^{crc_seed & 32'h47e47, data_i[15:0] & 16'h7e47};
  assign crc_bytes2_3 = ^{crc_seed & 32'h8fc8e, data_i[15:0] & 16'hfc8e};
  assign crc_bytes2_4 = ^{crc_seed & 32'h10e68d, data_i[15:0] & 16'he68d};
  assign crc_bytes2_5 = ^{crc_seed & 32'h20d28b, data_i[15:0] & 16'hd28b};
  assign crc_bytes2_6 = ^{crc_seed & 32'h40ba87, data_i[15:0] & 16'hba87};
  assign crc_bytes2_7 = ^{crc_seed & 32'h806a9e, data_i[15:0] & 16'h6a9e};
  assign crc_bytes2_8 = ^{crc_seed & 32'h100d53c, data_i[15:0] & 16'hd53c};
  assign crc_bytes2_9 = ^{crc_seed & 32'h200b5e8, data_i[15:0] & 16'hb5e8};
  assign crc_bytes2_10 = ^{crc_seed & 32'h4007440, data_i[15:0] & 16'h7440};
  assign crc_bytes2_11 = ^{crc_seed & 32'h800e881, data_i[15:0] & 16'he881};
  assign crc_bytes2_12 = ^{crc_seed & 32'h1000ce93, data_i[15:0] & 16'hce93};
  assign crc_bytes2_13 = ^{crc_seed & 32'h200082b6, data_i[15:0] & 16'h82b6};
  assign crc_bytes2_14 = ^{crc_seed & 32'h40001afc, data_i[15:0] & 16'h1afc};
  assign crc_bytes2_15 = ^{crc_seed & 32'h800035f9, data_i[15:0] & 16'h35f9};
  assign crc_bytes2_16 = ^{crc_seed & 32'h6bf2, data_i[15:0] & 16'h6bf2};
  assign crc_bytes2_17 = ^{crc_seed & 32'hd7e5, data_i[15:0] & 16'hd7e5};
  assign crc_bytes2_18 = ^{crc_seed & 32'hb05a, data_i[15:0] & 16'hb05a};
  assign crc_bytes2_19 = ^{crc_seed & 32'h7f24, data_i[15:0] & 16'h7f24};
  assign crc_bytes2_20 = ^{crc_seed & 32'hfe48, data_i[15:0] & 16'hfe48};
  assign crc_bytes2_21 = ^{crc_seed & 32'he301, data_i[15:0] & 16'he301};
  assign crc_bytes2_22 = ^{crc_seed & 32'hd992, data_i[15:0] & 16'hd992};
  assign crc_bytes2_23 = ^{crc_seed & 32'hacb5, data_i[15:0] & 16'hacb5};
  assign crc_bytes2_24 = ^{crc_seed & 32'h46fb, data_i[15:0] & 16'h46fb};
  assign crc_bytes2_25 = ^{crc_seed & 32'h8df7, data_i[15:0] & 16'h8df7};
  assign crc_bytes2_26 = ^{crc_seed & 32'h47e, data_i[15:0] & 16'h47e};
  assign crc_bytes2_27 = ^{crc_seed & 32'h8fc, data_i[15:0] & 16'h8fc};
  assign crc_bytes2_28 = ^{crc_seed & 32'h11f9, data_i[15:0] & 16'h11f9};
  assign crc_bytes2_29 = ^{crc_seed & 32'h23f2, data_i[15:0] & 16'h23f2};
  assign crc_bytes2_30 = ^{crc_seed & 32'h47e4, data_i[15:0] & 16'h47e4};
  assign crc_bytes2_31 = ^{crc_seed & 32'h8fc8, data_i[15:0] & 16'h8fc8};
  assign crc_bytes2 = {crc_bytes2_31, crc_bytes2_30, crc_bytes2_29, crc_bytes2_28, crc_bytes2_27, crc_bytes2_26, crc_bytes2_25, crc_bytes2_24, crc_bytes2_23, crc_bytes2_22, crc_bytes2_21, crc_bytes2_20, crc_bytes2_19, crc_bytes2_18, crc_bytes2_17, crc_bytes2_16, crc_bytes2_15, crc_bytes2_14, crc_bytes2_13, crc_bytes2_12, crc_bytes2_11, crc_bytes2_10, crc_bytes2_9, crc_bytes2_8, crc_bytes2_7, crc_bytes2_6, crc_bytes2_5, crc_bytes2_4, crc_bytes2_3, crc_bytes2_2, crc_bytes2_1, crc_bytes2_0};
  assign crc_bytes3_0 = ^{crc_seed & 32'h11f91ca, data_i[23:0] & 24'h1f91ca};
  assign crc_bytes3_1 = ^{crc_seed & 32'h23f2395, data_i[23:0] & 24'h3f2395};
  assign crc_bytes3_2 = ^{crc_seed & 32'h47e472b, data_i[23:0] & 24'h7e472b};
  assign crc_bytes3_3 = ^{crc_seed & 32'h8fc8e57, data_i[23:0] & 24'hfc8e57};
  assign crc_bytes3_4 = ^{crc_seed & 32'h10e68d65, data_i[23:0] & 24'he68d65};
  assign crc_bytes3_5 = ^{crc_seed & 32'h20d28b01, data_i[23:0] & 24'hd28b01};
  assign crc_bytes3_6 = ^{crc_seed & 32'h40ba87c9, data_i[23:0] & 24'hba87c9};
  assign crc_bytes3_7 = ^{crc_seed & 32'h806a9e58, data_i[23:0] & 24'h6a9e58};
  assign crc_bytes3_8 = ^{crc_seed & 32'hd53cb0, data_i[23:0] & 24'hd53cb0};
  assign crc_bytes3_9 = ^{crc_seed & 32'hb5e8ab, data_i[23:0] & 24'hb5e8ab};
  assign crc_bytes3_10 = ^{crc_seed & 32'h74409c, data_i[23:0] & 24'h74409c};
  assign crc_bytes3_11 = ^{crc_seed & 32'he88138, data_i[23:0] & 24'he88138};
  assign crc_bytes3_12 = ^{crc_seed & 32'hce93bb, data_i[23:0] & 24'hce93bb};
  assign crc_bytes3_13 = ^{crc_seed & 32'h82b6bc, data_i[23:0] & 24'h82b6bc};
  assign crc_bytes3_14 = ^{crc_seed & 32'h1afcb2, data_i[23:0] & 24'h1afcb2};
  assign crc_bytes3_15 = ^{crc_seed & 32'h35f965, data_i[23:0] & 24'h35f965};
  assign crc_bytes3_16 = ^{crc_seed & 32'h6bf2cb, data_i[23:0] & 24'h6bf2cb};
  assign crc_bytes3_17 = ^{crc_seed & 32'hd7e596, data_i[23:0] & 24'hd7e596};
  assign crc_bytes3_18 = ^{crc_seed & 32'hb05ae6, data_i[23:0] & 24'hb05ae6};
  assign crc_bytes3_19 = ^{crc_seed & 32'h7f2406, data_i[23:0] & 24'h7f2406};
  assign crc_bytes3_20 = ^{crc_seed & 32'hfe480c, data_i[23:0] & 24'hfe480c};
  assign crc_bytes3_21 = ^{crc_seed & 32'he301d2, data_i[23:0] & 24'he301d2};
  assign crc_bytes3_22 = ^{crc_seed & 32'hd9926f, data_i[23:0] & 24'hd9926f};
  assign crc_bytes3_23 = ^{crc_seed & 32'hacb514, data_i[23:0] & 24'hacb514};
  assign crc_bytes3_24 = ^{crc_seed & 32'h46fbe3, data_i[23:0] & 24'h46fbe3};
  assign crc_bytes3_25 = ^{crc_seed & 32'h8df7c6, data_i[23:0] & 24'h8df7c6};
  assign crc_bytes3_26 = ^{crc_seed & 32'h47e47, data_i[23:0] & 24'h47e47};
  assign crc_bytes3_27 = ^{crc_seed & 32'h8fc8e, data_i[23:0] & 24'h8fc8e};
  assign crc_bytes3_28 = ^{crc_seed & 32'h11f91c, data_i[23:0] & 24'h11f91c};
  assign crc_bytes3_29 = ^{crc_seed & 32'h23f239, data_i[23:0] & 24'h23f239};
  assign crc_bytes3_30 = ^{crc_seed & 32'h47e472, data_i[23:0] & 24'h47e472};
  assign crc_bytes3_31 = ^{crc_seed & 32'h8fc8e5, data_i[23:0] & 24'h8fc8e5};
  assign crc_bytes3 = {crc_bytes3_31, crc_bytes3_30, crc_bytes3_29, crc_bytes3_28, crc_bytes3_27, crc_bytes3_26, crc_bytes3_25, crc_bytes3_24, crc_bytes3_23, crc_bytes3_22, crc_bytes3_21, crc_bytes3_20, crc_bytes3_19, crc_bytes3_18, crc_bytes3_17, crc_bytes3_16, crc_bytes3_15, crc_bytes3_14, crc_bytes3_13, crc_bytes3_12, crc_bytes3_11, crc_bytes3_10, crc_bytes3_9, crc_bytes3_8, crc_bytes3_7, crc_bytes3_6, crc_bytes3_5, crc_bytes3_4, crc_bytes3_3, crc_bytes3_2, crc_bytes3_1, crc_bytes3_0};
  assign crc_bytes4_0 = ^{crc_seed & 32'h1f91caf6, data_i & 32'h1f91caf6};
  assign crc_bytes4_1 = ^{crc_seed & 32'h3f2395ec, data_i & 32'h3f2395ec};
  assign crc_bytes4_2 = ^{crc_seed & 32'h7e472bd8, data_i & 32'h7e472bd8};
  assign crc_bytes4_3 = ^{crc_seed & 32'hfc8e57b1, data_i & 32'hfc8e57b1};
  assign crc_bytes4_4 = ^{crc_seed & 32'he68d6595, data_i & 32'he68d6595};
  assign crc_bytes4_5 = ^{crc_seed & 32'hd28b01dd, data_i & 32'hd28b01dd};
  assign crc_bytes4_6 = ^{crc_seed & 32'hba87c94c, data_i & 32'hba87c94c};
  assign crc_bytes4_7 = ^{crc_seed & 32'h6a9e586f, data_i & 32'h6a9e586f};
  assign crc_bytes4_8 = ^{crc_seed & 32'hd53cb0de, data_i & 32'hd53cb0de};
  assign crc_bytes4_9 = ^{crc_seed & 32'hb5e8ab4b, data_i & 32'hb5e8ab4b};
  assign crc_bytes4_10 = ^{crc_seed & 32'h74409c60, data_i & 32'h74409c60};
  assign crc_bytes4_11 = ^{crc_seed & 32'he88138c1, data_i & 32'he88138c1};
  assign crc_bytes4_12 = ^{crc_seed & 32'hce93bb74, data_i & 32'hce93bb74};
  assign crc_bytes4_13 = ^{crc_seed & 32'h82b6bc1f, data_i & 32'h82b6bc1f};
  assign crc_bytes4_14 = ^{crc_seed & 32'h1afcb2c8, data_i & 32'h1afcb2c8};
  assign crc_bytes4_15 = ^{crc_seed & 32'h35f96591, data_i & 32'h35f96591};
  assign crc_bytes4_16 = ^{crc_seed & 32'h6bf2cb23, data_i & 32'h6bf2cb23};
  assign crc_bytes4_17 = ^{crc_seed & 32'hd7e59646, data_i & 32'hd7e59646};
  assign crc_bytes4_18 = ^{crc_seed & 32'hb05ae67b, data_i & 32'hb05ae67b};
  assign crc_bytes4_19 = ^{crc_seed & 32'h7f240600, data_i & 32'h7f240600};
  assign crc_bytes4_20 = ^{crc_seed & 32'hfe480c00, data_i & 32'hfe480c00};
  assign crc_bytes4_21 = ^{crc_seed & 32'he301d2f6, data_i & 32'he301d2f6};
  assign crc_bytes4_22 = ^{crc_seed & 32'hd9926f1b, data_i & 32'hd9926f1b};
  assign crc_bytes4_23 = ^{crc_seed & 32'hacb514c0, data_i & 32'hacb514c0};
  assign crc_bytes4_24 = ^{crc_seed & 32'h46fbe377, data_i & 32'h46fbe377};
  assign crc_bytes4_25 = ^{crc_seed & 32'h8df7c6ee, data_i & 32'h8df7c6ee};
  assign crc_bytes4_26 = ^{crc_seed & 32'h47e472b, data_i & 32'h47e472b};
  assign crc_bytes4_27 = ^{crc_seed & 32'h8fc8e57, data_i & 32'h8fc8e57};
  assign crc_bytes4_28 = ^{crc_seed & 32'h11f91caf, data_i & 32'h11f91caf};
  assign crc_bytes4_29 = ^{crc_seed & 32'h23f2395e, data_i & 32'h23f2395e};
  assign crc_bytes4_30 = ^{crc_seed & 32'h47e472bd, data_i & 32'h47e472bd};
  assign crc_bytes4_31 = ^{crc_seed & 32'h8fc8e57b, data_i & 32'h8fc8e57b};
  assign crc_bytes4 = {crc_bytes4_31, crc_bytes4_30, crc_bytes4_29, crc_bytes4_28, crc_bytes4_27, crc_bytes4_26, crc_bytes4_25, crc_bytes4_24, crc_bytes4_23, crc_bytes4_22, crc_bytes4_21, crc_bytes4_20, crc_bytes4_19, crc_bytes4_18, crc_bytes4_17, crc_bytes4_16, crc_bytes4_15, crc_bytes4_14, crc_bytes4_13, crc_bytes4_12, crc_bytes4_11, crc_bytes4_10, crc_bytes4_9, crc_bytes4_8, crc_bytes4_7, crc_bytes4_6, crc_bytes4_5, crc_bytes4_4, crc_bytes4_3, crc_bytes4_2, crc_bytes4_1, crc_bytes4_0};

  always_comb begin
    crc_d = crc_seed;
    if (valid_i) begin
      case (keep_i)
        4'd1: begin
          crc_d = crc_bytes1;
        end
        4'd3: begin
          crc_d = crc_bytes2;
        end
        4'd7: begin
          crc_d = crc_bytes3;
        end
        4'hf: begin
          crc_d = crc_bytes4;
        end
        default: ;
      endcase
    end
  end

  assign crc_o = crc_q ^ 32'hffffffff;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      crc_q <= 32'hffffffff;
    end else begin
      crc_q <= crc_d;
    end
  end

endmodule
