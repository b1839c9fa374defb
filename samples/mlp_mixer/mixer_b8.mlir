// MLP-Mixer, batch 8: 32x32x3 images, 4x4 patches (64 tokens), hidden 128,
// token MLP 64, channel MLP 512, depth 4, 10 classes.
// Written by samples/mlp_mixer/mixer.py; weights in mixer.npz (same script).
//   mlvm-aot build mixer_b8.mlir -o mixer_b8.so --params mixer.npz

func.func @main(%x: tensor<8x32x32x3xf32>) -> tensor<8x10xf32> {
  %v0 = "mlvm.reshape"(%x) : (tensor<8x32x32x3xf32>) -> tensor<8x8x4x8x4x3xf32>
  %v1 = "mlvm.transpose"(%v0) <{perm = array<i64: 1, 3, 0, 2, 4, 5>}> : (tensor<8x8x4x8x4x3xf32>) -> tensor<8x8x8x4x4x3xf32>
  %v2 = "mlvm.reshape"(%v1) : (tensor<8x8x8x4x4x3xf32>) -> tensor<512x48xf32>
  %v3 = "mlvm.param"() <{name = "embed_w"}> : () -> tensor<48x128xf32>
  %v4 = "mlvm.matmul"(%v2, %v3) : (tensor<512x48xf32>, tensor<48x128xf32>) -> tensor<512x128xf32>
  %v5 = "mlvm.param"() <{name = "embed_b"}> : () -> tensor<128xf32>
  %v6 = "mlvm.add"(%v4, %v5) : (tensor<512x128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v7 = "mlvm.param"() <{name = "b0_ln1_g"}> : () -> tensor<128xf32>
  %v8 = "mlvm.param"() <{name = "b0_ln1_b"}> : () -> tensor<128xf32>
  %v9 = "mlvm.layer_norm"(%v6, %v7, %v8) <{axes = array<i64: -1>, eps = 1.0e-06 : f32}> : (tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v10 = "mlvm.reshape"(%v9) : (tensor<512x128xf32>) -> tensor<64x1024xf32>
  %v11 = "mlvm.param"() <{name = "b0_tok_w1"}> : () -> tensor<64x64xf32>
  %v12 = "mlvm.matmul"(%v11, %v10) : (tensor<64x64xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v13 = "mlvm.param"() <{name = "b0_tok_b1"}> : () -> tensor<64x1xf32>
  %v14 = "mlvm.add"(%v12, %v13) : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %v15 = "mlvm.gelu"(%v14) <{approximate = "tanh"}> : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v16 = "mlvm.param"() <{name = "b0_tok_w2"}> : () -> tensor<64x64xf32>
  %v17 = "mlvm.matmul"(%v16, %v15) : (tensor<64x64xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v18 = "mlvm.param"() <{name = "b0_tok_b2"}> : () -> tensor<64x1xf32>
  %v19 = "mlvm.add"(%v17, %v18) : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %v20 = "mlvm.reshape"(%v6) : (tensor<512x128xf32>) -> tensor<64x1024xf32>
  %v21 = "mlvm.add"(%v20, %v19) : (tensor<64x1024xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v22 = "mlvm.reshape"(%v21) : (tensor<64x1024xf32>) -> tensor<512x128xf32>
  %v23 = "mlvm.param"() <{name = "b0_ln2_g"}> : () -> tensor<128xf32>
  %v24 = "mlvm.param"() <{name = "b0_ln2_b"}> : () -> tensor<128xf32>
  %v25 = "mlvm.layer_norm"(%v22, %v23, %v24) <{axes = array<i64: -1>, eps = 1.0e-06 : f32}> : (tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v26 = "mlvm.param"() <{name = "b0_ch_w1"}> : () -> tensor<128x512xf32>
  %v27 = "mlvm.matmul"(%v25, %v26) : (tensor<512x128xf32>, tensor<128x512xf32>) -> tensor<512x512xf32>
  %v28 = "mlvm.param"() <{name = "b0_ch_b1"}> : () -> tensor<512xf32>
  %v29 = "mlvm.add"(%v27, %v28) : (tensor<512x512xf32>, tensor<512xf32>) -> tensor<512x512xf32>
  %v30 = "mlvm.gelu"(%v29) <{approximate = "tanh"}> : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %v31 = "mlvm.param"() <{name = "b0_ch_w2"}> : () -> tensor<512x128xf32>
  %v32 = "mlvm.matmul"(%v30, %v31) : (tensor<512x512xf32>, tensor<512x128xf32>) -> tensor<512x128xf32>
  %v33 = "mlvm.param"() <{name = "b0_ch_b2"}> : () -> tensor<128xf32>
  %v34 = "mlvm.add"(%v32, %v33) : (tensor<512x128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v35 = "mlvm.add"(%v22, %v34) : (tensor<512x128xf32>, tensor<512x128xf32>) -> tensor<512x128xf32>
  %v36 = "mlvm.param"() <{name = "b1_ln1_g"}> : () -> tensor<128xf32>
  %v37 = "mlvm.param"() <{name = "b1_ln1_b"}> : () -> tensor<128xf32>
  %v38 = "mlvm.layer_norm"(%v35, %v36, %v37) <{axes = array<i64: -1>, eps = 1.0e-06 : f32}> : (tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v39 = "mlvm.reshape"(%v38) : (tensor<512x128xf32>) -> tensor<64x1024xf32>
  %v40 = "mlvm.param"() <{name = "b1_tok_w1"}> : () -> tensor<64x64xf32>
  %v41 = "mlvm.matmul"(%v40, %v39) : (tensor<64x64xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v42 = "mlvm.param"() <{name = "b1_tok_b1"}> : () -> tensor<64x1xf32>
  %v43 = "mlvm.add"(%v41, %v42) : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %v44 = "mlvm.gelu"(%v43) <{approximate = "tanh"}> : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v45 = "mlvm.param"() <{name = "b1_tok_w2"}> : () -> tensor<64x64xf32>
  %v46 = "mlvm.matmul"(%v45, %v44) : (tensor<64x64xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v47 = "mlvm.param"() <{name = "b1_tok_b2"}> : () -> tensor<64x1xf32>
  %v48 = "mlvm.add"(%v46, %v47) : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %v49 = "mlvm.reshape"(%v35) : (tensor<512x128xf32>) -> tensor<64x1024xf32>
  %v50 = "mlvm.add"(%v49, %v48) : (tensor<64x1024xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v51 = "mlvm.reshape"(%v50) : (tensor<64x1024xf32>) -> tensor<512x128xf32>
  %v52 = "mlvm.param"() <{name = "b1_ln2_g"}> : () -> tensor<128xf32>
  %v53 = "mlvm.param"() <{name = "b1_ln2_b"}> : () -> tensor<128xf32>
  %v54 = "mlvm.layer_norm"(%v51, %v52, %v53) <{axes = array<i64: -1>, eps = 1.0e-06 : f32}> : (tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v55 = "mlvm.param"() <{name = "b1_ch_w1"}> : () -> tensor<128x512xf32>
  %v56 = "mlvm.matmul"(%v54, %v55) : (tensor<512x128xf32>, tensor<128x512xf32>) -> tensor<512x512xf32>
  %v57 = "mlvm.param"() <{name = "b1_ch_b1"}> : () -> tensor<512xf32>
  %v58 = "mlvm.add"(%v56, %v57) : (tensor<512x512xf32>, tensor<512xf32>) -> tensor<512x512xf32>
  %v59 = "mlvm.gelu"(%v58) <{approximate = "tanh"}> : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %v60 = "mlvm.param"() <{name = "b1_ch_w2"}> : () -> tensor<512x128xf32>
  %v61 = "mlvm.matmul"(%v59, %v60) : (tensor<512x512xf32>, tensor<512x128xf32>) -> tensor<512x128xf32>
  %v62 = "mlvm.param"() <{name = "b1_ch_b2"}> : () -> tensor<128xf32>
  %v63 = "mlvm.add"(%v61, %v62) : (tensor<512x128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v64 = "mlvm.add"(%v51, %v63) : (tensor<512x128xf32>, tensor<512x128xf32>) -> tensor<512x128xf32>
  %v65 = "mlvm.param"() <{name = "b2_ln1_g"}> : () -> tensor<128xf32>
  %v66 = "mlvm.param"() <{name = "b2_ln1_b"}> : () -> tensor<128xf32>
  %v67 = "mlvm.layer_norm"(%v64, %v65, %v66) <{axes = array<i64: -1>, eps = 1.0e-06 : f32}> : (tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v68 = "mlvm.reshape"(%v67) : (tensor<512x128xf32>) -> tensor<64x1024xf32>
  %v69 = "mlvm.param"() <{name = "b2_tok_w1"}> : () -> tensor<64x64xf32>
  %v70 = "mlvm.matmul"(%v69, %v68) : (tensor<64x64xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v71 = "mlvm.param"() <{name = "b2_tok_b1"}> : () -> tensor<64x1xf32>
  %v72 = "mlvm.add"(%v70, %v71) : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %v73 = "mlvm.gelu"(%v72) <{approximate = "tanh"}> : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v74 = "mlvm.param"() <{name = "b2_tok_w2"}> : () -> tensor<64x64xf32>
  %v75 = "mlvm.matmul"(%v74, %v73) : (tensor<64x64xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v76 = "mlvm.param"() <{name = "b2_tok_b2"}> : () -> tensor<64x1xf32>
  %v77 = "mlvm.add"(%v75, %v76) : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %v78 = "mlvm.reshape"(%v64) : (tensor<512x128xf32>) -> tensor<64x1024xf32>
  %v79 = "mlvm.add"(%v78, %v77) : (tensor<64x1024xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v80 = "mlvm.reshape"(%v79) : (tensor<64x1024xf32>) -> tensor<512x128xf32>
  %v81 = "mlvm.param"() <{name = "b2_ln2_g"}> : () -> tensor<128xf32>
  %v82 = "mlvm.param"() <{name = "b2_ln2_b"}> : () -> tensor<128xf32>
  %v83 = "mlvm.layer_norm"(%v80, %v81, %v82) <{axes = array<i64: -1>, eps = 1.0e-06 : f32}> : (tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v84 = "mlvm.param"() <{name = "b2_ch_w1"}> : () -> tensor<128x512xf32>
  %v85 = "mlvm.matmul"(%v83, %v84) : (tensor<512x128xf32>, tensor<128x512xf32>) -> tensor<512x512xf32>
  %v86 = "mlvm.param"() <{name = "b2_ch_b1"}> : () -> tensor<512xf32>
  %v87 = "mlvm.add"(%v85, %v86) : (tensor<512x512xf32>, tensor<512xf32>) -> tensor<512x512xf32>
  %v88 = "mlvm.gelu"(%v87) <{approximate = "tanh"}> : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %v89 = "mlvm.param"() <{name = "b2_ch_w2"}> : () -> tensor<512x128xf32>
  %v90 = "mlvm.matmul"(%v88, %v89) : (tensor<512x512xf32>, tensor<512x128xf32>) -> tensor<512x128xf32>
  %v91 = "mlvm.param"() <{name = "b2_ch_b2"}> : () -> tensor<128xf32>
  %v92 = "mlvm.add"(%v90, %v91) : (tensor<512x128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v93 = "mlvm.add"(%v80, %v92) : (tensor<512x128xf32>, tensor<512x128xf32>) -> tensor<512x128xf32>
  %v94 = "mlvm.param"() <{name = "b3_ln1_g"}> : () -> tensor<128xf32>
  %v95 = "mlvm.param"() <{name = "b3_ln1_b"}> : () -> tensor<128xf32>
  %v96 = "mlvm.layer_norm"(%v93, %v94, %v95) <{axes = array<i64: -1>, eps = 1.0e-06 : f32}> : (tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v97 = "mlvm.reshape"(%v96) : (tensor<512x128xf32>) -> tensor<64x1024xf32>
  %v98 = "mlvm.param"() <{name = "b3_tok_w1"}> : () -> tensor<64x64xf32>
  %v99 = "mlvm.matmul"(%v98, %v97) : (tensor<64x64xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v100 = "mlvm.param"() <{name = "b3_tok_b1"}> : () -> tensor<64x1xf32>
  %v101 = "mlvm.add"(%v99, %v100) : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %v102 = "mlvm.gelu"(%v101) <{approximate = "tanh"}> : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v103 = "mlvm.param"() <{name = "b3_tok_w2"}> : () -> tensor<64x64xf32>
  %v104 = "mlvm.matmul"(%v103, %v102) : (tensor<64x64xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v105 = "mlvm.param"() <{name = "b3_tok_b2"}> : () -> tensor<64x1xf32>
  %v106 = "mlvm.add"(%v104, %v105) : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %v107 = "mlvm.reshape"(%v93) : (tensor<512x128xf32>) -> tensor<64x1024xf32>
  %v108 = "mlvm.add"(%v107, %v106) : (tensor<64x1024xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %v109 = "mlvm.reshape"(%v108) : (tensor<64x1024xf32>) -> tensor<512x128xf32>
  %v110 = "mlvm.param"() <{name = "b3_ln2_g"}> : () -> tensor<128xf32>
  %v111 = "mlvm.param"() <{name = "b3_ln2_b"}> : () -> tensor<128xf32>
  %v112 = "mlvm.layer_norm"(%v109, %v110, %v111) <{axes = array<i64: -1>, eps = 1.0e-06 : f32}> : (tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v113 = "mlvm.param"() <{name = "b3_ch_w1"}> : () -> tensor<128x512xf32>
  %v114 = "mlvm.matmul"(%v112, %v113) : (tensor<512x128xf32>, tensor<128x512xf32>) -> tensor<512x512xf32>
  %v115 = "mlvm.param"() <{name = "b3_ch_b1"}> : () -> tensor<512xf32>
  %v116 = "mlvm.add"(%v114, %v115) : (tensor<512x512xf32>, tensor<512xf32>) -> tensor<512x512xf32>
  %v117 = "mlvm.gelu"(%v116) <{approximate = "tanh"}> : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %v118 = "mlvm.param"() <{name = "b3_ch_w2"}> : () -> tensor<512x128xf32>
  %v119 = "mlvm.matmul"(%v117, %v118) : (tensor<512x512xf32>, tensor<512x128xf32>) -> tensor<512x128xf32>
  %v120 = "mlvm.param"() <{name = "b3_ch_b2"}> : () -> tensor<128xf32>
  %v121 = "mlvm.add"(%v119, %v120) : (tensor<512x128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v122 = "mlvm.add"(%v109, %v121) : (tensor<512x128xf32>, tensor<512x128xf32>) -> tensor<512x128xf32>
  %v123 = "mlvm.param"() <{name = "ln_g"}> : () -> tensor<128xf32>
  %v124 = "mlvm.param"() <{name = "ln_b"}> : () -> tensor<128xf32>
  %v125 = "mlvm.layer_norm"(%v122, %v123, %v124) <{axes = array<i64: -1>, eps = 1.0e-06 : f32}> : (tensor<512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %v126 = "mlvm.reshape"(%v125) : (tensor<512x128xf32>) -> tensor<64x8x128xf32>
  %v127 = "mlvm.reduce"(%v126) <{kind = "mean", axes = array<i64: 0>}> : (tensor<64x8x128xf32>) -> tensor<8x128xf32>
  %v128 = "mlvm.param"() <{name = "head_w"}> : () -> tensor<128x10xf32>
  %v129 = "mlvm.matmul"(%v127, %v128) : (tensor<8x128xf32>, tensor<128x10xf32>) -> tensor<8x10xf32>
  %v130 = "mlvm.param"() <{name = "head_b"}> : () -> tensor<10xf32>
  %v131 = "mlvm.add"(%v129, %v130) : (tensor<8x10xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  func.return %v131 : tensor<8x10xf32>
}
