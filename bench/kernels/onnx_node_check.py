"""onnx_node_check.py - Run npucc's float32 Conv/Gemm/MatMul/Pool/BatchNorm kernels on the ONNX
backend node tests (reference data we did not write) through ctypes, without the compiler.

It derives the kernel parameters from each node's attributes the same way lib/lower/cpu/*.cpp
do (explicit pads, auto_pad, ConvTranspose output_shape) and prints OK/BAD per test with the
error relative to max|expected|. Build the kernels as a shared library first:

  cc -std=c99 -O2 -shared -fPIC -Iruntime/kernels runtime/kernels/npucc_{gemm,conv,dwconv,pool,norm}.c \
     -lm -o /tmp/libnpucc_kernels.so
  /usr/bin/python3 bench/kernels/onnx_node_check.py /tmp/libnpucc_kernels.so
"""
import ctypes, glob, os, sys
import numpy as np, onnx
from onnx import numpy_helper, helper
L = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else '/tmp/libnpucc_kernels.so')
FP = ctypes.POINTER(ctypes.c_float)
L.npucc_sgemm_scratch_floats.restype = ctypes.c_size_t
L.npucc_conv2d_scratch_floats.restype = ctypes.c_size_t
L.npucc_conv_transpose2d_scratch_floats.restype = ctypes.c_size_t
L.npucc_depthwise_conv2d_scratch_floats.restype = ctypes.c_size_t
def p(a): return a.ctypes.data_as(FP) if a is not None else None
def I(*v): return [ctypes.c_int32(int(x)) for x in v]
def F(*v): return [ctypes.c_float(float(x)) for x in v]
ROOT='/usr/share/libonnx-testdata/data/node/'
def load(d):
    m = onnx.load(d+'/model.onnx'); n = m.graph.node[0]
    ins = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(d+'/test_data_set_0/input_*.pb'))]
    outs = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(d+'/test_data_set_0/output_*.pb'))]
    attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
    for k,v in list(attrs.items()):
        if isinstance(v, bytes): attrs[k]=v.decode()
    return n, ins, outs, attrs
def spatial2d(x, y, attrs, transpose=False, wshape=None):
    sp = x.ndim - 2
    ks = list(attrs.get('kernel_shape', wshape[2:] if wshape is not None else None))
    st = list(attrs.get('strides', [1]*sp)); dl = list(attrs.get('dilations', [1]*sp))
    pads = list(attrs.get('pads', [0]*2*sp)); ap = attrs.get('auto_pad', 'NOTSET')
    op = list(attrs.get('output_padding', [0]*sp))
    if ap != 'NOTSET' or (transpose and 'output_shape' in attrs and 'pads' not in attrs):
        for i in range(sp):
            inn, out = x.shape[2+i], y.shape[2+i]; eff=(ks[i]-1)*dl[i]+1
            if ap == 'VALID': tot = 0
            elif transpose: tot = st[i]*(inn-1)+op[i]+eff-out
            else: tot = max(0,(out-1)*st[i]+eff-inn)
            small = (ap=='SAME_UPPER') if transpose else (ap!='SAME_LOWER')
            b = tot//2 if small else tot-tot//2
            pads[i]=b; pads[i+sp]=tot-b
    if sp == 1:
        return dict(H=1,W=x.shape[2],OH=1,OW=y.shape[2],KH=1,KW=ks[0],SH=1,SW=st[0],DH=1,DW=dl[0],PT=0,PL=pads[0],PB=0,PR=pads[1])
    return dict(H=x.shape[2],W=x.shape[3],OH=y.shape[2],OW=y.shape[3],KH=ks[0],KW=ks[1],SH=st[0],SW=st[1],DH=dl[0],DW=dl[1],PT=pads[0],PL=pads[1],PB=pads[2],PR=pads[3])
res = []
for d in sorted(glob.glob(ROOT+'test_*')):
    name = os.path.basename(d)
    try: n, ins, outs, attrs = load(d)
    except Exception as e: continue
    op = n.op_type
    if op not in ('Conv','ConvTranspose','MaxPool','AveragePool','GlobalAveragePool','GlobalMaxPool','Gemm','MatMul','BatchNormalization'): continue
    if any(i.dtype != np.float32 for i in ins) or ins[0].ndim == 5 or len(outs) != 1 or attrs.get('training_mode',0): 
        print('skip', name); continue
    ref = outs[0]; y = np.zeros(ref.shape, np.float32); x = np.ascontiguousarray(ins[0])
    if op in ('Conv','ConvTranspose'):
        w = ins[1]; b = ins[2] if len(ins)>2 else None; g = attrs.get('group',1)
        s = spatial2d(x, ref, attrs, op=='ConvTranspose', w.shape)
        N,C = x.shape[:2]; M = ref.shape[1]
        if op == 'Conv':
            if C//g == 1:
                sc = np.zeros(L.npucc_depthwise_conv2d_scratch_floats(*I(s['OH'],s['OW'],s['KH'],s['KW'],s['SH'],s['SW'],s['DH'],s['DW']))+1, np.float32)
            else:
                sc = np.zeros(L.npucc_conv2d_scratch_floats(*I(C,M,s['OH'],s['OW'],s['KH'],s['KW'],g))+1, np.float32)
            fn = L.npucc_depthwise_conv2d_f32 if C//g == 1 else L.npucc_conv2d_f32
            args = [p(x),p(w),p(b),p(y),p(sc)] + I(N,C,s['H'],s['W'],M,s['OH'],s['OW'],s['KH'],s['KW'],s['SH'],s['SW'],s['DH'],s['DW'],s['PT'],s['PL']) + ([] if C//g==1 else I(g)) + F(-3.4e38,3.4e38)
            fn(*args)
        else:
            sc = np.zeros(L.npucc_conv_transpose2d_scratch_floats(*I(C,s['H'],s['W'],M,s['KH'],s['KW'],g))+1, np.float32)
            L.npucc_conv_transpose2d_f32(p(x),p(w),p(b),p(y),p(sc),*I(N,C,s['H'],s['W'],M,s['OH'],s['OW'],s['KH'],s['KW'],s['SH'],s['SW'],s['DH'],s['DW'],s['PT'],s['PL'],g),*F(-3.4e38,3.4e38))
    elif op in ('MaxPool','AveragePool'):
        s = spatial2d(x, ref, attrs)
        NC = x.shape[0]*x.shape[1]
        if op == 'MaxPool':
            L.npucc_maxpool2d_f32(p(x),p(y),*I(NC,s['H'],s['W'],s['OH'],s['OW'],s['KH'],s['KW'],s['SH'],s['SW'],s['DH'],s['DW'],s['PT'],s['PL']))
        else:
            L.npucc_avgpool2d_f32(p(x),p(y),*I(NC,s['H'],s['W'],s['OH'],s['OW'],s['KH'],s['KW'],s['SH'],s['SW'],s['DH'],s['DW'],s['PT'],s['PL'],s['PB'],s['PR'],attrs.get('count_include_pad',0)))
    elif op.startswith('Global'):
        NC = x.shape[0]*x.shape[1]; sp = x.size//NC
        (L.npucc_global_avgpool_f32 if 'Average' in op else L.npucc_global_maxpool_f32)(p(x),p(y),*I(NC,sp))
    elif op == 'BatchNormalization':
        sc,bb,mm,vv = [np.ascontiguousarray(a) for a in ins[1:5]]
        N,C = x.shape[:2]; inner = x.size//(N*C)
        L.npucc_batchnorm_f32(p(x),p(sc),p(bb),p(mm),p(vv),p(y),*I(N,C,inner),*F(attrs.get('epsilon',1e-5)))
    elif op == 'Gemm':
        a,bm = ins[0],ins[1]; c = ins[2] if len(ins)>2 else None
        ta,tb = attrs.get('transA',0),attrs.get('transB',0)
        M = a.shape[1] if ta else a.shape[0]; K = a.shape[0] if ta else a.shape[1]; Nn = bm.shape[0] if tb else bm.shape[1]
        mode = 0
        if c is not None:
            c = np.ascontiguousarray(c, np.float32)
            if c.size == 1: mode = 1
            elif c.shape == (M,Nn): mode = 4
            elif c.shape[-1] == Nn and c.size == Nn: mode = 2
            else: mode = 3
        sc = np.zeros(L.npucc_sgemm_scratch_floats(*I(M,Nn,K))+1, np.float32)
        L.npucc_gemm_f32(p(a),p(bm),p(c),p(y),p(sc),*I(M,Nn,K,ta,tb),*F(attrs.get('alpha',1.0),attrs.get('beta',1.0)),*I(mode),*F(-3.4e38,3.4e38))
    elif op == 'MatMul':
        a,bm = ins
        bo = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2]); M,K = a.shape[-2:]; Nn = bm.shape[-1]
        idx = np.arange(int(np.prod(bo))).reshape(bo) if bo else np.array(0)
        aa = np.ascontiguousarray(np.broadcast_to(a, bo+a.shape[-2:])); bb = np.ascontiguousarray(np.broadcast_to(bm, bo+bm.shape[-2:]))
        nb = int(np.prod(bo)) if bo else 1
        ao = (np.arange(nb)*M*K).astype(np.int32); boff = (np.arange(nb)*K*Nn).astype(np.int32)
        sc = np.zeros(L.npucc_sgemm_scratch_floats(*I(M,Nn,K))+1, np.float32)
        IP = ctypes.POINTER(ctypes.c_int32)
        L.npucc_matmul_f32(p(aa),p(bb),p(y),p(sc),*I(nb,M,Nn,K),*F(-3.4e38,3.4e38),ao.ctypes.data_as(IP),boff.ctypes.data_as(IP))
    err = np.abs(y.astype(np.float64)-ref).max()/max(1e-30,np.abs(ref).max())
    print(('OK  ' if err <= 1e-5 else 'BAD ') + '%-55s rel err %.2e' % (name, err))
    res.append(err <= 1e-5)
print('%d of %d node tests match' % (sum(res), len(res)))
sys.exit(0 if all(res) else 1)
